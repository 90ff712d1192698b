/**
 * `GET /api/orders/{orderId}` (function key), `POST /api/orders/{orderId}/cancel` and
 * `POST /api/orders/{orderId}/review` (admin key: they move money; who called is recorded). The host
 * hands `{orderId}` percent-decoded once (Kestrel, docs/saga.md "HTTP API"); the use cases read that
 * order and signal only its own saga instances (docs/saga.md, "Instance ids").
 */
import type { InvocationContext } from '@azure/functions';
import { cancelOrder, getOrder, reviewSaga, type OrdersApiDeps } from '../../services/fulfillment/orders-api';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { jsonBody, responseOf } from './http-support';
import { actorOf } from './actor';

/** Every HTTP function binds the durable client, so that all of them have one shape. */
const DURABLE_CLIENT = [durableClientInput];

export function ordersHttp(deps: (context: InvocationContext) => OrdersApiDeps): HttpFunctionDefinition[] {
  return [
    {
      name: 'getOrder',
      route: 'orders/{orderId}',
      methods: ['GET'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => responseOf(await getOrder(deps(context), request.params.orderId)),
    },
    {
      name: 'cancelOrder',
      route: 'orders/{orderId}/cancel',
      methods: ['POST'],
      authLevel: 'admin',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const by = actorOf(request);
        const response = responseOf(await cancelOrder(deps(context), request.params.orderId, by));
        context.log('cancel requested', { orderId: request.params.orderId, status: response.status, by });
        return response;
      },
    },
    {
      name: 'reviewOrder',
      route: 'orders/{orderId}/review',
      methods: ['POST'],
      authLevel: 'admin',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return body.response;
        const by = actorOf(request);
        const response = responseOf(await reviewSaga(deps(context), request.params.orderId, body.value, by));
        context.log('review submitted', { orderId: request.params.orderId, status: response.status, by });
        return response;
      },
    },
  ];
}
