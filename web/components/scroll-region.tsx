import type { ReactNode } from 'react';

/**
 * A wide table on a narrow screen scrolls inside its own box instead of widening the whole page. The box
 * is a named region that takes focus, so a keyboard can scroll it too (a table of plain text has nothing
 * else to focus).
 */
export function ScrollRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="scroll-region" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
