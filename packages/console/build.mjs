// Builds the console into dist/: one script and one style sheet named by their content's hash (cached for a
// year by the server), and index.html naming them. No inline script or style, so the page's CSP needs no
// 'unsafe-inline'. Run by the root's install (`prepare`) and build.
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'dist');

const result = await build({
  entryPoints: [join(here, 'src/main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  write: false,
  outdir: out,
  logLevel: 'warning',
});

const hashed = (file) => {
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 10);
  const name = file.path.slice(out.length + 1);
  const dot = name.lastIndexOf('.');
  return { name: `${name.slice(0, dot)}.${hash}${name.slice(dot)}`, contents: file.contents };
};
const files = result.outputFiles.map(hashed);
const script = files.find((file) => file.name.endsWith('.js'));
const style = files.find((file) => file.name.endsWith('.css'));
if (script === undefined || style === undefined) throw new Error('esbuild gave no script or no style sheet');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
for (const file of files) await writeFile(join(out, file.name), file.contents);
await writeFile(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hortus console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${style.name}">
<script type="module" src="${script.name}"></script>
</head>
<body>
<div id="app"><p>Loading the Hortus console…</p></div>
<noscript>The Hortus console needs JavaScript.</noscript>
</body>
</html>
`,
);
console.log(`console built: ${(await readdir(out)).join(', ')}`);
