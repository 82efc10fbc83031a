export interface RequestOptions {
  xhr?: boolean;
  /** The CSRF token to send; `false` sends none. Default: the token from the last page. */
  csrf?: string | false;
  /** The Origin header to send (browsers send it on POST); default: our own. */
  origin?: string | null;
  secFetchSite?: string;
  /** More headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
}

/** A tiny browser stand-in: keeps cookies, remembers the CSRF token of the last page, never follows redirects. */
export class TestClient {
  readonly cookies = new Map<string, string>();
  csrfToken = '';

  /** `origin`: the site's origin as browsers write it (default `baseUrl`; behind a TLS proxy, https). */
  constructor(
    readonly baseUrl: string,
    readonly origin = baseUrl,
  ) {}

  async get(path: string, options: RequestOptions = {}): Promise<Response> {
    const response = await fetch(this.baseUrl + path, { headers: this.headers(options), redirect: 'manual' });
    await this.absorb(response);
    return response;
  }

  /** `fields` as pairs: a field may come more than once, as a hand-made request may send it. */
  async postForm(
    path: string,
    fields: Record<string, string> | [string, string][],
    options: RequestOptions = {},
  ): Promise<Response> {
    const body = new URLSearchParams(fields);
    const csrf = options.csrf === undefined ? this.csrfToken : options.csrf;
    if (csrf !== false && csrf) body.set('_csrf', csrf);
    const response = await fetch(this.baseUrl + path, {
      method: 'POST',
      headers: { ...this.headers(options), 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
      redirect: 'manual',
    });
    await this.absorb(response);
    return response;
  }

  async postJson(path: string, json: unknown, options: RequestOptions = {}): Promise<Response> {
    const csrf = options.csrf === undefined ? this.csrfToken : options.csrf;
    const response = await fetch(this.baseUrl + path, {
      method: 'POST',
      headers: {
        ...this.headers({ xhr: true, ...options }),
        'Content-Type': 'application/json',
        ...(csrf ? { 'X-CSRF-Token': csrf } : {}),
      },
      body: JSON.stringify(json),
      redirect: 'manual',
    });
    await this.absorb(response);
    return response;
  }

  async signIn(email: string, password: string): Promise<Response> {
    await this.get('/login');
    const response = await this.postForm('/login', { email, password });
    if (response.status !== 302) throw new Error(`sign-in as ${email} failed with ${response.status}`);
    await this.get('/competitors');
    return response;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private headers(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { Cookie: this.cookieHeader() };
    if (options.xhr) headers['X-Requested-With'] = 'XMLHttpRequest';
    const origin = options.origin === undefined ? this.origin : options.origin;
    if (origin) headers.Origin = origin;
    if (options.secFetchSite) headers['Sec-Fetch-Site'] = options.secFetchSite;
    return { ...headers, ...options.headers };
  }

  private async absorb(response: Response): Promise<void> {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...rest] = (pair ?? '').split('=');
      if (!name) continue;
      const value = rest.join('=');
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
    if ((response.headers.get('content-type') ?? '').includes('text/html')) {
      const html = await response.clone().text();
      const match = /<meta name="csrf-token" content="([^"]*)"/.exec(html);
      if (match?.[1]) this.csrfToken = match[1];
    }
  }
}
