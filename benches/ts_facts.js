// The definitions and resolved call sites of JavaScript and TypeScript files, by the TypeScript
// compiler's own parser and type checker (nothing of maguyva's parsing): the ground truth of
// the JavaScript and TypeScript reference and impact sets (benches/intent_sets.py).
//
//     NODE_PATH=/usr/share/nodejs node benches/ts_facts.js ROOT FILE...    # FILE relative to ROOT
//
// Prints one JSON object: `definitions` (name, kind, path, start_line, end_line, name_line; 1-based
// lines), `calls` (the callee's and the calling function's positions in `definitions`, the
// caller -1 outside any function, the path and line of the call) and `unresolved` (the names of
// call sites whose target the checker could not name, or named outside these files: such a
// name's callers are not all known). A call is a call expression or `new`; a function is a
// function declaration, a method, or a variable or property bound to a function or arrow.
"use strict";
const ts = require("typescript");
const path = require("path");

const [root, ...files] = process.argv.slice(2);
const absolute = files.map((f) => path.resolve(root, f));
const program = ts.createProgram(absolute, {
  allowJs: true,
  checkJs: false,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.NodeJs,
  esModuleInterop: true,
});
const checker = program.getTypeChecker();
const wanted = new Set(absolute);

const definitions = [];
const byNode = new Map();

function line(source, position) {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

function isFunctionValue(node) {
  return node && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));
}

function define(source, node, nameNode, kind) {
  const index = definitions.length;
  definitions.push({
    name: nameNode.text,
    kind,
    path: path.relative(root, source.fileName).split(path.sep).join("/"),
    start_line: line(source, node.getStart(source)),
    end_line: line(source, node.getEnd()),
    name_line: line(source, nameNode.getStart(source)),
  });
  byNode.set(node, index);
}

function collect(source, node) {
  if (ts.isFunctionDeclaration(node) && node.name) define(source, node, node.name, "function");
  else if (ts.isMethodDeclaration(node) && ts.isIdentifier(node.name)) define(source, node, node.name, "method");
  else if (ts.isClassDeclaration(node) && node.name) define(source, node, node.name, "class");
  else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && isFunctionValue(node.initializer))
    define(source, node, node.name, "function");
  else if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && isFunctionValue(node.initializer))
    define(source, node, node.name, "method");
  else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
           ts.isPropertyAccessExpression(node.left) && isFunctionValue(node.right))
    define(source, node, node.left.name, "method"); // `app.use = function (...)`
  ts.forEachChild(node, (child) => collect(source, child));
}

const sources = program.getSourceFiles().filter((s) => wanted.has(path.resolve(s.fileName)));
for (const source of sources) collect(source, source);

// The definition a declaration is: itself (a function, method, class, or the variable or
// property bound to a function), or the assignment whose left side it is (`app.use = function`).
// A parameter, a local variable or anything inside a definition is not that definition.
function definitionOf(declaration) {
  if (byNode.has(declaration)) return byNode.get(declaration);
  const parent = declaration.parent;
  if (parent && ts.isBinaryExpression(parent) && parent.left === declaration && byNode.has(parent)) return byNode.get(parent);
  return undefined;
}

const calls = [];
const unresolved = new Set();

function enclosingFunction(node) {
  for (let up = node.parent; up; up = up.parent) {
    const index = byNode.get(up);
    if (index !== undefined && definitions[index].kind !== "class") return index;
  }
  return -1;
}

function resolve(source, node) {
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
    const callee = node.expression;
    const nameNode = ts.isPropertyAccessExpression(callee) ? callee.name : ts.isIdentifier(callee) ? callee : undefined;
    if (nameNode) {
      let symbol = checker.getSymbolAtLocation(nameNode);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const declared = (symbol && symbol.declarations) || [];
      const targets = [...new Set(declared.map(definitionOf).filter((i) => i !== undefined))];
      if (targets.length === 1) {
        calls.push({
          callee: targets[0],
          caller: enclosingFunction(node),
          path: path.relative(root, source.fileName).split(path.sep).join("/"),
          line: line(source, nameNode.getStart(source)),
        });
      } else if (!declared.length || targets.length > 1) {
        unresolved.add(nameNode.text);
      }
    }
  }
  ts.forEachChild(node, (child) => resolve(source, child));
}

for (const source of sources) resolve(source, source);
process.stdout.write(JSON.stringify({ definitions, calls, unresolved: [...unresolved].sort() }));
