/** A tool module as before definitions: a default export of tools, nothing else. */
import { moduleTools } from './module-tools.js';

export default moduleTools;
