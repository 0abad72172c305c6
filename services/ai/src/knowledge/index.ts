/**
 * The organization's knowledge base (issue #32): articles in ai's PostgreSQL, cut into chunks, searched on folded
 * text (accents ignored), and the passages a reply draft answers from. Other folders import only this face.
 */
export { knowledgeHandlers } from './knowledge.handler';
export { passagesFor, type Passage } from './retrieval';
export { knowledgePrompt } from './prompt';
