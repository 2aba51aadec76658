import { apiErrorFor, retryAfterMsOf, type ErrorBody } from './errors.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The producer's base URL, e.g. `https://cairn.example.com`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /**
   * The `fetch` to use (a test double, a proxy-aware one).
   * @defaultValue `globalThis.fetch`
   */
  fetch?: typeof fetch;
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

/** Per-request options. */
export interface RequestOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** Sends requests to the producer and turns error answers into typed errors. */
export class HttpTransport {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Sends a JSON request and parses the JSON answer; an error status throws its {@link CairnApiError} subclass. */
  async json<T>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<T> {
    const response = await this.send(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...options.headers,
      },
      signal: options.signal,
    });
    return (await response.json()) as T;
  }

  /** Opens a response (e.g. an event stream) and throws a typed error for an error status. */
  async send(
    method: string,
    path: string,
    init: { body?: string; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response> {
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      body: init.body,
      signal: init.signal,
      headers: {
        Accept: 'application/json',
        ...this.options.headers,
        ...(this.options.apiKey ? { Authorization: `Bearer ${this.options.apiKey}` } : {}),
        ...init.headers,
      },
    });
    if (!response.ok) {
      const retryAfterMs = retryAfterMsOf(response.headers.get('Retry-After'));
      throw apiErrorFor(response.status, await errorBody(response), method, path, retryAfterMs);
    }
    return response;
  }
}

async function errorBody(response: Response): Promise<Partial<ErrorBody>> {
  const text = await response.text().catch(() => '');
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') return parsed as Partial<ErrorBody>;
  } catch {
    // Not JSON (a proxy's page): keep the text as the message.
  }
  return text.trim() ? { message: text.trim().slice(0, 500) } : {};
}

/** `encodeURIComponent` for one path segment. */
export function segment(value: string): string {
  if (value === '') throw new TypeError('an id or name must not be empty');
  return encodeURIComponent(value);
}
