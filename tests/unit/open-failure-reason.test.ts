import { describe, expect, it } from 'vitest';
import { openFailureReason } from '#infra/db/open-embedded.ts';

describe('why the embedded database could not be opened, in one line', () => {
  it('takes the first line of an error message', () => {
    expect(openFailureReason(new Error('could not read pg_control\n    at stack'))).toBe(
      'could not read pg_control',
    );
  });

  it("names Emscripten's file-system errors (an errno, no message) instead of [object Object]", () => {
    expect(openFailureReason({ name: 'ErrnoError', errno: 44 })).toBe('a file or folder it needs is missing');
    expect(openFailureReason({ errno: 2, message: '' })).toBe('permission denied');
    expect(openFailureReason({ errno: 7 })).toBe('file system error 7');
  });

  it('falls back to a code, a thrown string, or says there was no reason', () => {
    expect(openFailureReason({ code: 'EACCES' })).toBe('EACCES');
    expect(openFailureReason('Aborted(). Build with -sASSERTIONS\nmore')).toBe(
      'Aborted(). Build with -sASSERTIONS',
    );
    expect(openFailureReason({})).toBe('no reason given');
    expect(openFailureReason(undefined)).toBe('no reason given');
  });
});
