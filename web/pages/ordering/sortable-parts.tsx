/**
 * Pieces the drag-sorted lists share (`/ranking`, `/segments`). Editors get a grip handle per item (a
 * button: drag it, or focus it and use the arrow keys) and, for browsers without JavaScript, move-up /
 * move-down buttons that submit the surrounding form. Viewers get the same list without either.
 */

export function DragHandle({
  label,
  describedBy,
  kind = 'item',
}: {
  label: string;
  describedBy: string;
  kind?: 'item' | 'group';
}) {
  return (
    <button
      type="button"
      className={kind === 'group' ? 'drag-handle drag-handle--group' : 'drag-handle'}
      aria-label={label}
      aria-describedby={describedBy}
      data-drag-handle={kind}
    >
      <span aria-hidden="true">⠿</span>
    </button>
  );
}

/** Submit buttons of the no-JavaScript form; hidden once the page's script takes over. */
export function MoveButtons({ name, value, label }: { name: string; value: string; label: string }) {
  return (
    <span className="move-buttons">
      <button type="submit" name={name} value={`${value}:up`} aria-label={`Move ${label} up`}>
        ↑
      </button>
      <button type="submit" name={name} value={`${value}:down`} aria-label={`Move ${label} down`}>
        ↓
      </button>
    </span>
  );
}

/**
 * The attributes that make an element a drag-sorted region for the page's script: its layout, the
 * component method each drop calls, the version the order was rendered at, and whether this user may sort.
 */
export const sortableRegion = (region: {
  layout: 'flat' | 'grouped';
  component: string;
  method: string;
  version: number;
  sortable: boolean;
}) => ({
  'data-sortable': region.layout,
  'data-component': region.component,
  'data-method': region.method,
  'data-version': region.version,
  'data-can-sort': region.sortable ? 'true' : undefined,
});

export function SortStatus() {
  return <p className="sr-only" role="status" aria-live="polite" data-sort-status />;
}

/** Says why a viewer finds no grips: the order is theirs to read, an editor's to change. */
export function ReadOnlyHint({ what }: { what: string }) {
  return <p className="field__hint">You can view {what}; editors and admins change it.</p>;
}
