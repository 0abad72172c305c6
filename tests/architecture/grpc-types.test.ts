import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';

/**
 * No `any` at a gRPC boundary (issue #14): every handler map a service serves and every client it calls another
 * service through is typed by the types generated from proto/ (packages/proto-types), so the compiler sees a
 * handler reading a field its request does not have, or a caller sending a wrong one. Checked with the compiler
 * itself: each handler's and each client method's parameters and result, and grpc-kit's own declarations.
 */
const root = path.join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The files that build handler maps (a function named `…Handlers`) or create clients (`createServiceClient`). */
function boundaryFiles(): string[] {
  const servicesDir = path.join(root, 'services');
  return readdirSync(servicesDir)
    .map((name) => path.join(servicesDir, name, 'src'))
    .filter((dir) => existsSync(dir))
    .flatMap(sources)
    .filter((file) => /function \w+Handlers\s*\(|createServiceClient\(/.test(readFileSync(file, 'utf8')));
}

function program(files: string[]): ts.Program {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram(files, { ...options, noEmit: true, types: ['node'] });
}

const isAny = (t: ts.Type) => (t.flags & ts.TypeFlags.Any) !== 0;

/** What is `any` (or not one method per name) in each method of `type`: `label.method(param)`, `label.method → result`. */
function untypedMethods(checker: ts.TypeChecker, type: ts.Type, at: ts.Node, label: string): string[] {
  const out: string[] = [];
  if (isAny(type)) return [`${label} is any`];
  if (type.getStringIndexType()) out.push(`${label} has a [name: string] signature instead of one typed entry per method`);
  for (const prop of type.getProperties()) {
    const methodType = checker.getTypeOfSymbolAtLocation(prop, at);
    for (const sig of methodType.getCallSignatures()) {
      for (const param of sig.getParameters()) {
        if (isAny(checker.getTypeOfSymbolAtLocation(param, at))) out.push(`${label}.${prop.name}(${param.name})`);
      }
      const result = sig.getReturnType();
      const awaited = checker.getAwaitedType(result) ?? result;
      if (isAny(result) || isAny(awaited)) out.push(`${label}.${prop.name} → any`);
    }
  }
  return out;
}

/** Every handler map (the result of a `…Handlers` function) and every created client, with what is untyped in it. */
function findings(files: string[]): string[] {
  const prog = program(files);
  const checker = prog.getTypeChecker();
  const out: string[] = [];
  for (const file of files) {
    const sf = prog.getSourceFile(file);
    if (!sf) throw new Error(`not compiled: ${file}`);
    const where = path.relative(root, file);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionDeclaration(node) && node.name && /Handlers$/.test(node.name.text)) {
        const sig = checker.getSignatureFromDeclaration(node);
        if (sig) out.push(...untypedMethods(checker, sig.getReturnType(), node, `${where} ${node.name.text}()`));
      }
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'createServiceClient') {
        const line = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        out.push(...untypedMethods(checker, checker.getTypeAtLocation(node), node, `${where}:${line} client`));
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/** `any` written anywhere in grpc-kit's handler, server, client and loader declarations. */
function anyKeywords(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword)
      out.push(`${path.relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe('gRPC boundaries are typed from the protos', () => {
  it('grpc-kit declares handlers, servers, clients and the loader without any', () => {
    const kit = ['typed.ts', 'server.ts', 'client.ts', 'proto.ts'].map((f) => path.join(root, 'packages', 'grpc-kit', 'src', f));
    expect(kit.flatMap(anyKeywords)).toEqual([]);
  });

  it('every handler map and every client of every service is typed method by method', () => {
    const files = boundaryFiles();
    // The services' handler maps and their clients (a sanity floor, so a changed pattern cannot empty the check).
    expect(files.filter((f) => /function \w+Handlers\s*\(/.test(readFileSync(f, 'utf8'))).length).toBeGreaterThanOrEqual(15);
    expect(files.filter((f) => readFileSync(f, 'utf8').includes('createServiceClient(')).length).toBeGreaterThanOrEqual(8);
    expect(findings(files)).toEqual([]);
  }, 120_000);

  it('catches an untyped handler map, an untyped client and any in grpc-kit', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'grpc-types-'));
    try {
      const file = path.join(dir, 'bad.ts');
      writeFileSync(
        file,
        [
          'type Untyped = Record<string, (req: any, ctx: unknown) => Promise<any>>;',
          'export function badHandlers(): Untyped { return {}; }',
          'export function halfHandlers(): { Get: (req: any) => Promise<{ id: string }> } { return { Get: async () => ({ id: "" }) }; }',
          'declare function createServiceClient(): { Get(req: object): Promise<any> };',
          'export const client = createServiceClient();',
          'export const loose: any = 1;',
        ].join('\n'),
      );
      expect(findings([file]).map((f) => f.replace(/^.*bad\.ts/, 'bad.ts'))).toEqual([
        'bad.ts badHandlers() has a [name: string] signature instead of one typed entry per method',
        'bad.ts halfHandlers().Get(req)',
        'bad.ts:5 client.Get → any',
      ]);
      expect(anyKeywords(file).map((f) => f.replace(/^.*bad\.ts/, 'bad.ts'))).toEqual(['bad.ts:1', 'bad.ts:1', 'bad.ts:3', 'bad.ts:4', 'bad.ts:6']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
