/**
 * Environment variables that look like one of Rivals' settings but are not: `DATABSE_URL`, `port`,
 * `LOGLEVEL`. The app reads only the names it knows, so such a variable was ignored without a word: a
 * misspelt `DATABASE_URL` started on the embedded database, in a folder nobody backs up.
 *
 * Close means: the same name in other letter case, or at most one edit (a letter added, dropped, changed,
 * or two neighbours swapped) for names of five characters or fewer and two for longer ones. Short names
 * get one edit because the usual environment is full of four-letter names two edits from ours (`HOME` and
 * `HOST`, `TERM` and `PORT`).
 */
export function settingsLookingLike(
  known: readonly string[],
  env: Record<string, string | undefined>,
): { name: string; meant: string }[] {
  const names = new Set(known);
  const found: { name: string; meant: string }[] = [];
  for (const name of Object.keys(env)) {
    if (names.has(name)) continue;
    const meant = known.find(
      (setting) =>
        setting.toUpperCase() === name.toUpperCase() ||
        editDistance(setting, name.toUpperCase()) <= (setting.length <= 5 ? 1 : 2),
    );
    if (meant) found.push({ name, meant });
  }
  return found;
}

/** The warning line for one such variable. */
export const lookingLikeWarning = ({ name, meant }: { name: string; meant: string }): string =>
  `The environment variable ${name} is not a Rivals setting, so it is ignored: did you mean ${meant}?`;

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: optimal string alignment. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}
