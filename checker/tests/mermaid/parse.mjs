// Parses every ```mermaid block of a Markdown file (argument 1, or standard input) with the real
// Mermaid parser. Prints "ok <diagram type>" per block; exits 1 on the first parse error.
import { readFileSync } from 'node:fs';
import mermaid from 'mermaid';

const text = readFileSync(process.argv[2] ?? 0, 'utf8');
const blocks = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]);
if (blocks.length === 0) {
  console.log('no mermaid block');
  process.exit(1);
}
for (const block of blocks) {
  try {
    const result = await mermaid.parse(block);
    console.log(`ok ${result.diagramType}`);
  } catch (e) {
    console.log(`parse error: ${String(e).split('\n').join(' ')}`);
    process.exit(1);
  }
}
