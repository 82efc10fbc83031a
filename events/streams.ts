/** One function per stream name, so a stream is spelled in exactly one place. */
export const competitorStream = (competitorId: string): string => `competitor-${competitorId}`;

/**
 * The form of a competitor name that decides whether two names are the same: compatibility-normalized
 * (a decomposed "é" is the precomposed one, "ﬁ" is "fi"), without invisible characters (zero-width
 * spaces and joiners, soft hyphens), with runs of spaces as one, case-folded. Names that look the same
 * on screen are the same name.
 *
 * Case folding is one rule for every language (decision 0024): the Greek sigma is one letter whether
 * written Σ, σ or ς — each is lower-cased as a capital Σ is (ς at the end of a word, σ elsewhere), so
 * the keys of names spelled as Greek is written stay what they were; "ẞ" is "ß" but not "ss"; the
 * Turkish İ and ı stay letters of their own.
 */
export const competitorNameKey = (name: string): string =>
  name
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[σς]/gu, 'Σ')
    .toLocaleLowerCase('en-US');

/** One stream per competitor name (`competitorNameKey`): claims keep names unique among live competitors. */
export const competitorNameStream = (name: string): string => `competitor-name-${competitorNameKey(name)}`;

/** Drag-sorting: every reorder of the ranking and the board; its version is what a drop `expect`s. */
export const orderingStream = (): string => 'ordering';

export const segmentsStream = (): string => 'segments';

/** All user management lives in one stream: few writes, and email uniqueness is decided in one place. */
export const usersStream = (): string => 'users';

/** Operator actions: replays, rebuilds, seeding. */
export const operationsStream = (): string => 'operations';

/**
 * One stream per dead letter that an operator acted on: its first event (Retried or Discarded) is the
 * claim, written before the bus is touched, so two clicks at once act once and every action is audited.
 */
export const deadLetterStream = (key: string): string => `dead-letter-${key}`;
