import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { inTempTree } from './module-faces';

/**
 * crm's contact rows have one owner (issue #30 item 3): only `contacts/db` names the `contacts` table in SQL. Every
 * other module (merges, scoring, bulk actions, transfers, reports, ...) asks the contacts face for what it needs:
 * set-based functions for writes and locks, and for read-only joins the face's `contactsFrom` / `contactsJoin`
 * fragments, which name the table inside contacts/db so no other file does. ContactWriter (contacts/contact-writer.ts)
 * writes rows only through contacts/db as well.
 *
 * The check reads every non-test source file with comments stripped and looks for `contacts` where SQL puts a table:
 * after FROM / JOIN / UPDATE / INTO / TABLE (ONLY allowed between), as a row type (`::contacts`, `%ROWTYPE`), or as
 * `table_name = 'contacts'`. Unit tests (*.test.ts) are skipped: their strings are inputs (an injection attempt
 * naming the table), not queries.
 */
const crmSrc = path.join(__dirname, '..', '..', 'services', 'crm', 'src');

const TABLE_USES = [
  /\b(?:FROM|JOIN|UPDATE|INTO|TABLE)\s+(?:ONLY\s+)?(?:"?public"?\.)?"?contacts"?(?![\w."])/gi,
  /::\s*(?:"?public"?\.)?"?contacts"?(?![\w."])/gi,
  /\bcontacts%ROWTYPE/gi,
  /\btable_name\s*=\s*'contacts'/gi,
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The text with `//` line comments and block comments blanked out (lines keep their numbers; a `//` inside a string such as a URL stays). */
function withoutComments(text: string): string {
  const blank = (comment: string) => comment.replace(/[^\n]/g, ' ');
  return text
    .replace(/\/\*[\s\S]*?\*\//g, blank)
    .replace(/(^|[^:'"`\w])(\/\/.*)$/gm, (_, before: string, comment: string) => before + blank(comment));
}

/** "file:line: match" for every place outside contacts/db that names the contacts table in SQL. */
function contactTableUses(src: string): string[] {
  const owner = path.join(src, 'contacts', 'db') + path.sep;
  const out: string[] = [];
  for (const file of sources(src)) {
    if (file.startsWith(owner)) continue;
    const text = withoutComments(readFileSync(file, 'utf8'));
    for (const pattern of TABLE_USES) {
      for (const m of text.matchAll(pattern)) {
        const line = text.slice(0, m.index).split('\n').length;
        out.push(`${path.relative(src, file)}:${line}: ${m[0].replace(/\s+/g, ' ')}`);
      }
    }
  }
  return out.sort();
}

describe('crm contacts table owner', () => {
  it('only contacts/db names the contacts table in SQL', () => {
    expect(contactTableUses(crmSrc)).toEqual([]);
  });

  it('sees the table named in any SQL position outside contacts/db, and ignores comments, tests and other tables', () => {
    inTempTree('crm-contacts-owner', (src, write) => {
      write('contacts/db/contacts.repo.ts', "export const q = 'SELECT * FROM contacts WHERE org_id = $1';\n");
      write('contacts/domain/friends.ts', "export const q = 'SELECT id FROM contacts WHERE org_id = $1';\n");
      write(
        'scoring/scoring.repo.ts',
        [
          'export const a = `UPDATE contacts t SET lead_score = 1`;',
          'export const b = `select c.id from\n  contacts c`;',
          "export const c = 'SELECT 1 FROM x JOIN ONLY public.contacts c ON true';",
          'export const d = \'INSERT INTO "contacts" (id) SELECT id FROM jsonb_populate_record(NULL::contacts, $1)\';',
          "export const e = `SELECT 1 FROM information_schema.columns WHERE table_name = 'contacts'`;",
        ].join('\n'),
      );
      write(
        'reports/fine.ts',
        [
          '// rows come FROM contacts through the face',
          '/* UPDATE contacts is the writer’s job */',
          "export const q = 'SELECT * FROM analytics_contacts JOIN contacts_x ON true';",
          "export const r = 'SELECT * FROM contact_activities a'; // not FROM contacts",
          "export const s = 'Only team leads delete contacts in bulk';",
          "export const url = 'http://x/contacts';",
        ].join('\n'),
      );
      write('reports/fine.test.ts', 'const evil = "x\'); DROP TABLE contacts; --";\n');
      expect(contactTableUses(src)).toEqual(
        [
          'contacts/domain/friends.ts:1: FROM contacts',
          'scoring/scoring.repo.ts:1: UPDATE contacts',
          'scoring/scoring.repo.ts:2: from contacts',
          'scoring/scoring.repo.ts:4: JOIN ONLY public.contacts',
          'scoring/scoring.repo.ts:5: INTO "contacts"',
          'scoring/scoring.repo.ts:5: ::contacts',
          "scoring/scoring.repo.ts:6: table_name = 'contacts'",
        ].sort(),
      );
    });
  });
});
