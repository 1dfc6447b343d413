import * as assert from 'node:assert';
import { applyPatch, parseUnifiedDiff } from '../../src/patch';

describe('unified diffs (approval previews in the diff editor)', () => {
  const original = "import express from 'express'\nconst app = express()\napp.use(express.json())\n\napp.listen(3000)\n\nexport default app\n";
  const preview = "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -3,4 +3,4 @@\n app.use(express.json())\n \n-app.listen(3000)\n+app.listen(8080)\n \n";

  it('parses the preview of a replace_text call and applies it', () => {
    const files = parseUnifiedDiff(preview);
    assert.strictEqual(files.length, 1);
    assert.strictEqual(files[0].oldPath, 'src/app.ts');
    assert.strictEqual(files[0].newPath, 'src/app.ts');
    assert.strictEqual(applyPatch(original, files[0]), original.replace('3000', '8080'));
  });

  it('refuses a hunk that no longer matches the file', () => {
    const [f] = parseUnifiedDiff(preview);
    assert.strictEqual(applyPatch(original.replace('3000', '4000'), f), undefined);
  });

  it('creates a new file from /dev/null and keeps CRLF files CRLF', () => {
    const [f] = parseUnifiedDiff('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    assert.strictEqual(f.oldPath, null);
    assert.strictEqual(applyPatch('', f), 'a\nb\n');
    const [g] = parseUnifiedDiff('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
    assert.strictEqual(applyPatch('a\r\nb\r\n', g), 'a\r\nc\r\n');
  });

  it('honours "no newline at end of file"', () => {
    const [f] = parseUnifiedDiff('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n');
    assert.strictEqual(applyPatch('a\n', f), 'b');
  });
});
