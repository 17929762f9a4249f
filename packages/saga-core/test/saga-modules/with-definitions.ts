/** A tool module that also declares saga definitions (`definitions`). */
import { defineSaga } from '@agent-saga/core';
import { moduleTools } from './module-tools.js';

export const definitions = [
  defineSaga({
    name: 'open_and_close',
    version: 1,
    steps: [
      { id: 'order', tool: 'get_order' },
      { id: 'open', tool: 'create_ticket' },
      { id: 'close', tool: 'close_ticket', pivot: true },
    ],
  }),
  defineSaga({ name: 'look_up', version: 1, steps: [{ id: 'order', tool: 'get_order' }] }),
];
export default moduleTools;
