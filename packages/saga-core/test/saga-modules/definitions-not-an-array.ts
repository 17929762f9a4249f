/** A tool module whose `definitions` export is not an array. */
import { defineSaga } from '@agent-saga/core';
import { moduleTools } from './module-tools.js';

export const definitions = defineSaga({ name: 'alone', version: 1, steps: [{ id: 'a', tool: 'get_order' }] });
export default moduleTools;
