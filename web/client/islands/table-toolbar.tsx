import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { tableEvents, type TableStateDetail } from '../../components/data-table/table-events.ts';

export interface TableToolbarProps {
  tableId: string;
  /** The page address the form submits to when JavaScript is off. */
  action: string;
  label: string;
  search: string;
  sort: string;
  perPage: number;
  perPageOptions: readonly number[];
}

const DEBOUNCE_MS = 250;

/**
 * Search box and page-size selector. They sit outside the swapped table region, so focus, caret and
 * typed text survive every refresh. Without JavaScript the same form submits as a plain GET.
 */
export function TableToolbar(props: TableToolbarProps) {
  const [search, setSearch] = useState(props.search);
  const [perPage, setPerPage] = useState(props.perPage);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();

  const send = (detail: Partial<TableStateDetail>) => {
    clearTimeout(timer.current);
    document.getElementById(props.tableId)?.dispatchEvent(new CustomEvent(tableEvents.request, { detail }));
  };

  // Back/forward restores the table from the URL: mirror its state here.
  useEffect(() => {
    const table = document.getElementById(props.tableId);
    const sync = (event: Event) => {
      const detail = (event as CustomEvent<TableStateDetail>).detail;
      setSearch(detail.search);
      setPerPage(detail.perPage);
    };
    table?.addEventListener(tableEvents.restored, sync);
    return () => table?.removeEventListener(tableEvents.restored, sync);
  }, [props.tableId]);

  const onSearchChange = (value: string) => {
    setSearch(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => send({ search: value, page: 1 }), DEBOUNCE_MS);
  };

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    send({ search, page: 1 });
  };

  return (
    <form className="table-toolbar" method="get" action={props.action} role="search" onSubmit={onSubmit}>
      <label htmlFor={`${id}-search`} className="table-toolbar__label">
        Search {props.label}
      </label>
      <div className="table-toolbar__search">
        <input
          id={`${id}-search`}
          type="search"
          name="search"
          ref={input}
          value={search}
          maxLength={200}
          autoComplete="off"
          placeholder={`Search ${props.label}…`}
          onChange={(e) => onSearchChange(e.target.value)}
        />
        {search !== '' && (
          <button
            type="button"
            className="button button--ghost"
            aria-label="Clear search"
            onClick={() => {
              setSearch('');
              send({ search: '', page: 1 });
              // This button goes with the text it clears: focus stays in the box, not on the page's start.
              input.current?.focus();
            }}
          >
            ×
          </button>
        )}
      </div>
      <input type="hidden" name="sort" value={props.sort} />
      <input type="hidden" name="page" value="1" />
      <label className="table-toolbar__per-page">
        Rows per page{' '}
        <select
          name="perPage"
          value={perPage}
          onChange={(e) => {
            const value = Number(e.target.value);
            setPerPage(value);
            // `send` cancels a search still waiting out its debounce: carry the typed text along.
            send({ search, perPage: value, page: 1 });
          }}
        >
          {props.perPageOptions.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="button">
        Search
      </button>
    </form>
  );
}
