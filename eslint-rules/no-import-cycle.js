// @ts-check
/**
 * `local/no-import-cycle`: no module may reach itself through its imports, type-only imports included.
 *
 * Why our own rule and not `import-x/no-cycle`: that rule skips every `import type` and every import whose
 * specifiers are all `type` (no option turns this off, see its `lib/rules/no-cycle.js`), and a cycle of types
 * is still two modules that cannot be understood, moved or published apart. This rule needs no resolver of
 * its own: it reads the import graph from the TypeScript program that the type-aware lint has built already,
 * so an import resolves here exactly as `tsc` resolves it (NodeNext, `.js` → `.ts`, workspace `exports`).
 *
 * An edge is any `import`, `export … from`, `import x = require()` or `import('…')` with a literal
 * specifier, whether it imports values or only types. The graph is built once per program (cached by the
 * program object, which the project service replaces when a file changes) and cut into strongly connected
 * components; an import is reported when its target lies in the importing file's own component, with one
 * shortest way back as the message, so the report names the whole circle.
 */
import ts from 'typescript';

/** @typedef {{ componentOf: Map<string, number>, edges: Map<string, Set<string>> }} ModuleGraph */

/** @type {WeakMap<ts.Program, ModuleGraph>} */
const graphs = new WeakMap();

/**
 * The file a module specifier resolves to in the program, or undefined for a package outside it.
 * @param {ts.TypeChecker} checker
 * @param {ts.Node} specifier
 */
function resolvedFile(checker, specifier) {
  const decl = checker.getSymbolAtLocation(specifier)?.valueDeclaration;
  return decl && ts.isSourceFile(decl) && !decl.isDeclarationFile ? decl.fileName : undefined;
}

/**
 * Every literal module specifier of a file: its import and re-export statements, and its `import('…')`s.
 * @param {ts.SourceFile} file
 * @returns {ts.StringLiteralLike[]}
 */
function moduleSpecifiers(file) {
  /** @type {ts.StringLiteralLike[]} */
  const out = [];
  for (const s of file.statements) {
    if ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier) {
      if (ts.isStringLiteralLike(s.moduleSpecifier)) out.push(s.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(s) && ts.isExternalModuleReference(s.moduleReference)) {
      if (ts.isStringLiteralLike(s.moduleReference.expression)) out.push(s.moduleReference.expression);
    }
  }
  // Why the text test: walking every node of every file to find the few dynamic imports would cost more
  // than the rest of the graph.
  if (file.text.includes('import(')) {
    /** @param {ts.Node} n */
    const visit = (n) => {
      if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const arg = n.arguments[0];
        if (arg && ts.isStringLiteralLike(arg)) out.push(arg);
      } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) {
        if (ts.isStringLiteralLike(n.argument.literal)) out.push(n.argument.literal);
      }
      ts.forEachChild(n, visit);
    };
    ts.forEachChild(file, visit);
  }
  return out;
}

/**
 * The program's import graph among its own files (no declaration files, nothing from node_modules), cut
 * into strongly connected components by Tarjan's algorithm.
 * @param {ts.Program} program
 * @returns {ModuleGraph}
 */
function moduleGraph(program) {
  const cached = graphs.get(program);
  if (cached) return cached;
  const checker = program.getTypeChecker();
  /** @type {Map<string, Set<string>>} */
  const edges = new Map();
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || program.isSourceFileFromExternalLibrary(file)) continue;
    /** @type {Set<string>} */
    const targets = new Set();
    for (const spec of moduleSpecifiers(file)) {
      const target = resolvedFile(checker, spec);
      if (target !== undefined) targets.add(target);
    }
    edges.set(file.fileName, targets);
  }

  /** @type {Map<string, number>} */
  const componentOf = new Map();
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {string[]} */
  const stack = [];
  const onStack = new Set();
  let next = 0;
  let components = 0;
  /** @param {string} v */
  const connect = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(/** @type {number} */ (low.get(v)), /** @type {number} */ (low.get(w))));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(/** @type {number} */ (low.get(v)), /** @type {number} */ (index.get(w))));
      }
    }
    if (low.get(v) === index.get(v)) {
      let w;
      do {
        w = /** @type {string} */ (stack.pop());
        onStack.delete(w);
        componentOf.set(w, components);
      } while (w !== v);
      components += 1;
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) connect(v);

  const graph = { componentOf, edges };
  graphs.set(program, graph);
  return graph;
}

/**
 * One shortest way from `from` back to `to` inside their component, as file names (breadth first).
 * @param {ModuleGraph} g
 * @param {string} from
 * @param {string} to
 */
function wayBack(g, from, to) {
  const component = g.componentOf.get(from);
  /** @type {Map<string, string | null>} */
  const parent = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = /** @type {string} */ (queue.shift());
    if (v === to) break;
    for (const w of g.edges.get(v) ?? []) {
      if (parent.has(w) || g.componentOf.get(w) !== component) continue;
      parent.set(w, v);
      queue.push(w);
    }
  }
  /** @type {string[]} */
  const path = [];
  for (let v = /** @type {string | null | undefined} */ (to); v != null; v = parent.get(v)) path.unshift(v);
  return path;
}

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles between modules, type-only imports included.' },
    schema: [],
    messages: {
      cycle:
        'Import cycle (type-only imports count): {{circle}}. Move what both sides need to a module they both import.',
    },
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    const program = services?.program;
    const toTs = services?.esTreeNodeToTSNodeMap;
    if (!program || !toTs) {
      throw new Error(
        `local/no-import-cycle needs type information (parserOptions.projectService) for ${context.filename}`,
      );
    }
    const self = program.getSourceFile(context.filename)?.fileName;
    if (self === undefined) return {};
    const checker = program.getTypeChecker();
    const root = context.cwd;

    /** @param {import('estree').Node | null | undefined} source */
    const check = (source) => {
      if (!source || source.type !== 'Literal' || typeof source.value !== 'string') return;
      const target = resolvedFile(checker, /** @type {ts.Node} */ (toTs.get(/** @type {never} */ (source))));
      if (target === undefined) return;
      const g = moduleGraph(program);
      const mine = g.componentOf.get(self);
      if (target !== self && (mine === undefined || g.componentOf.get(target) !== mine)) return;
      const circle = [self, ...wayBack(g, target, self)]
        .map((f) => f.slice(f.startsWith(`${root}/`) ? root.length + 1 : 0))
        .join(' → ');
      context.report({ node: source, messageId: 'cycle', data: { circle } });
    };
    return {
      ImportDeclaration: (n) => check(n.source),
      ExportNamedDeclaration: (n) => check(n.source),
      ExportAllDeclaration: (n) => check(n.source),
      ImportExpression: (n) => check(n.source),
      /** @param {any} n a TSImportEqualsDeclaration (a TypeScript node, unknown to ESLint's own types) */
      TSExternalModuleReference: (n) => check(n.expression),
      /** @param {any} n a TSImportType */
      TSImportType: (n) => check(n.argument?.literal ?? n.source),
    };
  },
};
