/** The answer of a component call (see the server's component protocol). */
export type ComponentAnswer =
  | { status: 'accepted'; position: number | null; transactionId: string; visible: boolean }
  | { status: 'pending'; message: string }
  | {
      status: 'rejected';
      code: string;
      message: string;
      fields?: Record<string, string>;
      details?: Record<string, unknown>;
    };

export interface ComponentRequest {
  event?: string;
  method?: string;
  payload: unknown;
  expect?: { version: number };
}

const csrfToken = () => document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

/** Sends one event or method call to a server-side component (docs/behaviour.md §6 and §8). */
export async function callComponent(component: string, request: ComponentRequest): Promise<ComponentAnswer> {
  let response: Response;
  try {
    response = await fetch(`/components/${encodeURIComponent(component)}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'X-Requested-With': 'XMLHttpRequest',
        'X-CSRF-Token': csrfToken(),
      },
      body: JSON.stringify(request),
    });
  } catch {
    return {
      status: 'rejected',
      code: 'network',
      message: 'Could not reach the server. Check your connection and try again.',
    };
  }
  const body = (await response.json().catch(() => undefined)) as
    ComponentAnswer | { error?: { code?: string; message?: string } } | undefined;
  if (body && 'status' in body) return body;
  return {
    status: 'rejected',
    code: body?.error?.code ?? 'failed',
    message: body?.error?.message ?? `The server answered ${response.status}. Please try again.`,
  };
}
