// What a V8 profile frame's script belongs to: an npm package (scoped ones by scope and name), a node: built-in
// module, a folder of ours (services/x, packages/x, tests/x), or the URL itself. Frames without a script are
// native or VM code.
export function packageOf(url) {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const m = url.match(/(services|packages|tests)\/([^/]+)\//);
  return m ? `${m[1]}/${m[2]}` : url;
}
