/** HTTP functions called as the Functions host calls them, and use cases seen through their HTTP mapping. */
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import type { HttpFunctionDefinition } from '../../src/functions/definition';
import { responseOf, type Outcome } from '../../src/functions/http/http-support';

export interface HttpCall {
  method?: string;
  params: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
  /** The query string's parameters. */
  query?: Record<string, string>;
  /** Receives every `context.log` argument list. */
  logged?: unknown[][];
}

/** Invokes the definition named `name` with a request built from `call` (method: its first). */
export function invokeHttp(
  definitions: readonly HttpFunctionDefinition[],
  name: string,
  call: HttpCall,
): Promise<HttpResponseInit> {
  const definition = definitions.find((d) => d.name === name);
  if (definition === undefined) throw new Error(`no function ${name}`);
  const request = new HttpRequest({
    method: call.method ?? definition.methods[0],
    url: `http://localhost/api/${definition.route}${call.query === undefined ? '' : `?${new URLSearchParams(call.query).toString()}`}`,
    params: call.params,
    ...(call.headers === undefined ? {} : { headers: call.headers }),
    ...(call.body === undefined ? {} : { body: { string: call.body } }),
  });
  const context = new InvocationContext({
    functionName: name,
    invocationId: 'test-invocation',
    logHandler: (_level, ...args) => call.logged?.push(args),
  });
  return definition.handler(request, context);
}

export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A use case answering with the status and body its outcome maps to over HTTP. */
export function viaHttp<A extends unknown[]>(
  useCase: (...args: A) => Promise<Outcome>,
): (...args: A) => Promise<HttpAnswer> {
  return async (...args) => {
    const response = responseOf(await useCase(...args));
    if (response.status === undefined) throw new Error('the HTTP mapping gave no status');
    return { status: response.status, body: response.jsonBody as Record<string, unknown> };
  };
}
