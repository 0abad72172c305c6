/**
 * The text rules and campaigns write and match: `{{name}}` placeholders and their rendering, and the accent- and
 * case-blind comparisons of keyword triggers and conditions. No Deps and no other module: the bottom of automation.
 */
export { containsPhrase, containsText, placeholdersOf, render, sameText, VARIABLE_NAME } from './text';
