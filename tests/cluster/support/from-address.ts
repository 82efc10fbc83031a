import http from 'node:http';

/**
 * Requests from a chosen loopback address (127.0.0.2, 127.0.0.3, …), which fetch cannot choose: sign-in
 * limits are per client address, so a test needs clients that differ in it.
 */
export interface Answer {
  status: number;
  cookies: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FromOptions {
  method?: string;
  cookie?: string;
  form?: Record<string, string>;
  /** More headers; an array sends the header once per value. */
  headers?: Record<string, string | string[]>;
  /** The Origin a form is sent with; default `http://127.0.0.1:<port>`. */
  origin?: string;
}

/** One HTTP request from `from` to 127.0.0.1:`port`. */
export function requestFrom(
  port: number,
  from: string,
  path: string,
  options: FromOptions = {},
): Promise<Answer> {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        localAddress: from,
        method: options.method ?? 'GET',
        headers: {
          ...(options.cookie ? { Cookie: options.cookie } : {}),
          ...(body
            ? {
                'Content-Type': 'application/x-www-form-urlencoded',
                Origin: options.origin ?? `http://127.0.0.1:${port}`,
              }
            : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? ''),
            headers: res.headers,
            body: text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens the sign-in page and signs in from `from`; the final status (302 signed in, 401, 429). */
export async function signInFrom(
  port: number,
  from: string,
  email: string,
  password: string,
  options: Pick<FromOptions, 'headers' | 'origin'> = {},
): Promise<number> {
  const page = await requestFrom(port, from, '/login', { headers: options.headers });
  const token = /<meta name="csrf-token" content="([^"]*)"/.exec(page.body)?.[1] ?? '';
  const answer = await requestFrom(port, from, '/login', {
    ...options,
    method: 'POST',
    cookie: page.cookies.join('; '),
    form: { email, password, next: '', _csrf: token },
  });
  return answer.status;
}
