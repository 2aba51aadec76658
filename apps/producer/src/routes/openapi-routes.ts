import { Hono } from 'hono';
import { API_REFERENCE_PATH, apiReferencePage } from '../openapi/api-reference-page.js';
import { OPENAPI_PATH, openApiDocument } from '../openapi/openapi-document.js';

/** `GET /openapi.json`: the API's OpenAPI 3.1 document; `GET /docs/api`: the same as an HTML reference page. */
export function openApiRoutes(): Hono {
  const app = new Hono();
  app.get(OPENAPI_PATH, (c) => c.json(openApiDocument()));
  let page: string | undefined;
  app.get(API_REFERENCE_PATH, (c) =>
    c.html((page ??= apiReferencePage(openApiDocument(), OPENAPI_PATH))),
  );
  return app;
}
