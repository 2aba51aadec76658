import type { OpenApiDocument, OpenApiOperationObject } from './openapi-document.js';

/** Where the API reference page is served. */
export const API_REFERENCE_PATH = '/docs/api';

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/** A description as HTML: escaped, its CommonMark code spans (`` `like this` ``) as `<code>`. */
function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** `#/components/schemas/RunView` becomes an in-page link to the schema's section. */
function schemaLink(schema: unknown): string {
  const ref = (schema as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string') return '';
  const name = ref.split('/').pop()!;
  return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
}

/** A schema as indented JSON, each `$ref` a link to the named schema. */
function schemaBlock(schema: unknown): string {
  const json = escapeHtml(JSON.stringify(schema, null, 2));
  const linked = json.replace(
    /&quot;#\/components\/schemas\/([A-Za-z]+)&quot;/g,
    (_all, name: string) =>
      `&quot;<a href="#schema-${name}">#/components/schemas/${name}</a>&quot;`,
  );
  return `<pre>${linked}</pre>`;
}

function operationSection(path: string, method: string, op: OpenApiOperationObject): string {
  const parameters = (op.parameters ?? []) as {
    name: string;
    in: string;
    required?: boolean;
    description?: string;
  }[];
  const body = op.requestBody?.content['application/json'];
  const rows = (cells: string[][]) =>
    cells.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join('')}</tr>`).join('');
  return `<section id="${escapeHtml(op.operationId)}">
<h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p><strong>${escapeHtml(op.summary)}</strong>${op.description ? ` ${prose(op.description)}` : ''}</p>
${
  parameters.length > 0
    ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>description</th></tr>${rows(
        parameters.map((p) => [
          `<code>${escapeHtml(p.name)}</code>`,
          escapeHtml(p.in),
          p.required ? 'yes' : 'no',
          prose(p.description ?? ''),
        ]),
      )}</table>`
    : ''
}
${body ? `<p>Body (<code>application/json</code>, ${op.requestBody!.required ? 'required' : 'optional'}): ${schemaLink(body.schema)}</p>` : ''}
<table><tr><th>status</th><th>answer</th><th>schema</th></tr>${rows(
    Object.entries(op.responses).map(([status, answer]) => [
      status,
      prose(answer.description),
      Object.entries(answer.content ?? {})
        .map(([type, media]) => schemaLink(media.schema) || `<code>${escapeHtml(type)}</code>`)
        .join(' '),
    ]),
  )}</table>
</section>`;
}

/**
 * The API reference as one self-contained HTML page, rendered on the server
 * from the document: no script, no other origin, so it works offline and
 * under the pages' Content-Security-Policy.
 */
export function apiReferencePage(document: OpenApiDocument, documentPath: string): string {
  const info = document.info as { title: string; version: string; description: string };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const schemes = (document.components.securitySchemes ?? {}) as Record<
    string,
    { description?: string }
  >;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d232a; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f4f5f7; padding: .75rem; overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d6d9de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
section { border-top: 1px solid #d6d9de; padding-top: .5rem; }
.method { display: inline-block; min-width: 4.5rem; font-size: 13px; color: #fff; background: #3b5bdb; padding: 0 .4rem; border-radius: 3px; }
</style>
</head>
<body>
<h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>${prose(info.description)}</p>
<p>The machine-readable document: <a href="${escapeHtml(documentPath)}">${escapeHtml(documentPath)}</a> (OpenAPI ${escapeHtml(document.openapi)}).</p>
<h2>Authentication</h2>
${Object.values(schemes)
  .map(
    (scheme) =>
      `<p><code>Authorization: Bearer &lt;key&gt;</code>: ${prose(scheme.description ?? '')}</p>`,
  )
  .join('\n')}
<h2>Operations</h2>
<ul>${operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escapeHtml(op.operationId)}">${method.toUpperCase()} ${escapeHtml(path)}</a>: ${escapeHtml(op.summary)}</li>`,
    )
    .join('')}</ul>
${operations.map(({ path, method, op }) => operationSection(path, method, op)).join('\n')}
<h2>Schemas</h2>
${Object.entries(document.components.schemas)
  .map(
    ([name, schema]) =>
      `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3>${schemaBlock(schema)}</section>`,
  )
  .join('\n')}
</body>
</html>
`;
}
