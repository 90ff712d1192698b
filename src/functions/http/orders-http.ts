/**
 * `GET /api/orders/{orderId}` (app role `Operations.Read`, or the function key),
 * `POST /api/orders/{orderId}/cancel` and `POST /api/orders/{orderId}/review` (`Operations.Write`, or
 * the admin key: they move money). Who called, as the platform vouches for them (./actor.ts), goes
 * into the saga record and the operators' audit. The host hands `{orderId}` percent-decoded once
 * (Kestrel, docs/saga.md "HTTP API"); the use cases read that order and signal only its own saga
 * instances (docs/saga.md, "Instance ids").
 */
import type { HttpRequest, HttpResponseInit, InvocationContext } from '@azure/functions';
import { cancelOrder, getOrder, reviewSaga, type OrdersApiDeps } from '../../services/fulfillment/orders-api';
import type { AuditEntry, OperationsJournal } from '../../services/operations/operations-journal';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { audited, jsonBody, responseOf } from './http-support';
import { authLevelFor, authorize, ROLE, type Caller, type Platform } from './actor';

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

/** Who may call, and where their changes are audited. */
export interface OrdersAccess {
  platform: Platform;
  journal: OperationsJournal;
  now: () => number;
}

export function ordersHttp(
  deps: (context: InvocationContext) => OrdersApiDeps,
  access: OrdersAccess,
): HttpFunctionDefinition[] {
  /** The saga record holds the action itself; the audit holds it among the operators' other actions. */
  const auditedChange = (
    action: 'cancel' | 'review',
    request: HttpRequest,
    asked: Record<string, unknown>,
    response: HttpResponseInit,
    caller: Caller,
    context: InvocationContext,
  ): Promise<HttpResponseInit> => {
    const status = response.status ?? 200;
    const error = (response.jsonBody as { error?: unknown } | undefined)?.error;
    const entry: AuditEntry = {
      action,
      request: { orderId: request.params.orderId, ...asked },
      outcome: status < 300 ? 'done' : 'refused',
      status,
      messages: [],
      ...(typeof error === 'string' ? { detail: error } : {}),
    };
    return audited(access.journal, access.now, caller, entry, response, context);
  };

  return [
    {
      name: 'getOrder',
      route: 'orders/{orderId}',
      methods: ['GET'],
      authLevel: authLevelFor(access.platform, ROLE.read),
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const authorized = authorize(request, access.platform, ROLE.read);
        if (!authorized.ok) return authorized.response;
        return responseOf(await getOrder(deps(context), request.params.orderId));
      },
    },
    {
      name: 'cancelOrder',
      route: 'orders/{orderId}/cancel',
      methods: ['POST'],
      authLevel: authLevelFor(access.platform, ROLE.write),
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const authorized = authorize(request, access.platform, ROLE.write);
        if (!authorized.ok) return authorized.response;
        const { caller } = authorized;
        const response = responseOf(await cancelOrder(deps(context), request.params.orderId, caller.actor));
        return auditedChange('cancel', request, {}, response, caller, context);
      },
    },
    {
      name: 'reviewOrder',
      route: 'orders/{orderId}/review',
      methods: ['POST'],
      authLevel: authLevelFor(access.platform, ROLE.write),
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const authorized = authorize(request, access.platform, ROLE.write);
        if (!authorized.ok) return authorized.response;
        const body = await jsonBody(request);
        if (!body.ok) return body.response;
        const { caller } = authorized;
        const response = responseOf(
          await reviewSaga(deps(context), request.params.orderId, body.value, caller.actor),
        );
        return auditedChange('review', request, { review: body.value }, response, caller, context);
      },
    },
  ];
}
