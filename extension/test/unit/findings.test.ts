import * as assert from 'node:assert';
import { clampLine, cleanPath, fencedBlocks, lineLengths, MAX_DIAGNOSTIC_LINE, MAX_FINDINGS, parseFindings } from '../../src/findingsParse';

describe('review findings (task-x-findings blocks → Problems panel)', () => {
  it('reads the findings of a task-x-findings block at the end of an answer', () => {
    const text = 'Two problems.\n\n```task-x-findings\n[{"path":"src/app.ts","line":3,"severity":"error","message":"port is hard-coded"},{"path":"./README.md","line":1,"severity":"Info","message":"say how to run"}]\n```\n';
    assert.deepStrictEqual(parseFindings(text), [
      { path: 'src/app.ts', line: 3, severity: 'error', message: 'port is hard-coded' },
      { path: 'README.md', line: 1, severity: 'info', message: 'say how to run' },
    ]);
  });

  it('ignores other code blocks, drops unusable entries and duplicates, survives bad JSON', () => {
    const text = [
      '```json', '[{"path":"a.ts","line":1,"severity":"error","message":"not a finding block"}]', '```',
      '~~~TASK-X-FINDINGS', '[{"path":"/etc/passwd","line":1,"severity":"error","message":"absolute"},', ' {"path":"../up.ts","line":1,"severity":"error","message":"leaves the root"},',
      ' {"path":"a.ts","line":0,"severity":"error","message":"line 0"}, {"path":"a.ts","line":2,"severity":"fatal","message":"bad severity"},',
      ' {"path":"a.ts","line":2,"severity":"warning","message":""}, "text", null,', ' {"path":"a.ts","line":2,"severity":"warning","message":"kept"},',
      ' {"path":"a.ts","line":2,"severity":"warning","message":"kept"}]', '~~~',
      '```task-x-findings', '[{"path": "b.ts", "line": 1, oops', '```',
    ].join('\n');
    assert.deepStrictEqual(parseFindings(text), [{ path: 'a.ts', line: 2, severity: 'warning', message: 'kept' }]);
  });

  it('bounds what one answer can add', () => {
    const many = Array.from({ length: MAX_FINDINGS + 50 }, (_, i) => ({ path: 'x.ts', line: i + 1, severity: 'info', message: 'x'.repeat(5000) }));
    const got = parseFindings('```task-x-findings\n' + JSON.stringify(many) + '\n```');
    assert.strictEqual(got.length, MAX_FINDINGS);
    assert.ok(got[0].message.length <= 2000 && got[0].message.endsWith('…'));
  });

  it('an unclosed block runs to the end of the text; paths are cleaned', () => {
    assert.deepStrictEqual(fencedBlocks('```task-x-findings\n[]', 'task-x-findings'), ['[]']);
    assert.strictEqual(cleanPath('./src//a.ts'), 'src/a.ts');
    assert.strictEqual(cleanPath('src\\win.ts'), 'src/win.ts');
    assert.strictEqual(cleanPath('C:/x.ts'), undefined);
    assert.strictEqual(cleanPath('a\u0000.ts'), undefined);
  });

  it('clamps a line past the end of the file to its last line with text, and covers that line', () => {
    const lens = lineLengths('one\ntwo!\r\nthree\n');
    assert.deepStrictEqual(lens, [3, 4, 5, 0]);
    assert.deepStrictEqual(clampLine(2, lens), { line: 1, end: 4 });
    assert.deepStrictEqual(clampLine(3, lens), { line: 2, end: 5 });
    assert.deepStrictEqual(clampLine(4, lens), { line: 2, end: 5 }, 'the empty line after the last newline');
    assert.deepStrictEqual(clampLine(9999, lens), { line: 2, end: 5 });
    assert.deepStrictEqual(clampLine(1e20, lens), { line: 2, end: 5 });
    assert.deepStrictEqual(clampLine(5, lineLengths('')), { line: 0, end: 0 }, 'an empty file');
    // A file that could not be read: the line as given, within what VS Code takes.
    assert.deepStrictEqual(clampLine(7, undefined), { line: 6, end: 0 });
    assert.deepStrictEqual(clampLine(1e20, undefined), { line: MAX_DIAGNOSTIC_LINE, end: 0 });
    assert.deepStrictEqual(clampLine(Number.NaN, lens), { line: 0, end: 3 });
  });
});
