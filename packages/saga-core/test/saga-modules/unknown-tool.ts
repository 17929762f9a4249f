/** A tool module whose definition names a tool the module does not register. */
import { defineSaga } from '@agent-saga/core';
import { moduleTools } from './module-tools.js';

export const definitions = [
  defineSaga({
    name: 'refund_and_reship',
    version: 2,
    steps: [
      { id: 'order', tool: 'get_order' },
      { id: 'charge', tool: 'charge_card' },
    ],
  }),
];
export default moduleTools;
