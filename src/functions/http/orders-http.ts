/** `GET /api/orders/{orderId}`, `POST /api/orders/{orderId}/cancel`, `POST /api/orders/{orderId}/review`. */
import type { InvocationContext } from '@azure/functions';
import { cancelOrder, getOrder, reviewSaga, type OrdersApiDeps } from '../../services/fulfillment/orders-api';
import { durableClientInput } from '../../adapters/azure/durable-client';
import type { HttpFunctionDefinition } from '../definition';
import { jsonBody, NOT_JSON, responseOf } from './http-support';

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
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const response = responseOf(await cancelOrder(deps(context), request.params.orderId));
        context.log('cancel requested', { orderId: request.params.orderId, status: response.status });
        return response;
      },
    },
    {
      name: 'reviewOrder',
      route: 'orders/{orderId}/review',
      methods: ['POST'],
      authLevel: 'function',
      extraInputs: DURABLE_CLIENT,
      handler: async (request, context) => {
        const body = await jsonBody(request);
        if (!body.ok) return NOT_JSON;
        const response = responseOf(await reviewSaga(deps(context), request.params.orderId, body.value));
        context.log('review submitted', { orderId: request.params.orderId, status: response.status });
        return response;
      },
    },
  ];
}
