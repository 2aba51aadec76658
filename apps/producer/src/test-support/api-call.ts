/** Sends a request: Hono's `app.request` for the app in the test, or `fetch` at a served producer. */
export type SendRequest = (input: string, init?: RequestInit) => Response | Promise<Response>;

/** What {@link callApi} got back: the status, the text, and the JSON body (`{}` when there is none). */
export interface ApiAnswer {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

/** A request to the HTTP API with a bearer key and an optional JSON body. */
export async function callApi(
  send: SendRequest,
  method: string,
  path: string,
  apiKey: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const res = await send(path, {
    method,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = text !== '' && (res.headers.get('content-type') ?? '').includes('json');
  return {
    status: res.status,
    text,
    body: json ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}
