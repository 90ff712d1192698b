/**
 * Lookups by a computed key on a plain record (a type with a string index signature, such as
 * Record<string, T>) reach Object.prototype: `record[key]` finds `constructor` or `toString`, and
 * `record['__proto__'] = value` replaces the prototype. Ids the contract allows are such
 * keys. The rule needs types (an array's numeric index, a tuple, or a literal key on a record is
 * fine; a string variable on a record is not): use Map, or the helpers of src/domain/own-properties.ts.
 * `key in record` with a non-literal key is refused for the same reason.
 */
import { ESLintUtils } from '@typescript-eslint/utils';

const createRule = ESLintUtils.RuleCreator(() => 'src/domain/own-properties.ts');

function hasStringIndex(checker, type) {
  if (type.isUnion()) return type.types.some((part) => hasStringIndex(checker, part));
  if (checker.isArrayType(type) || checker.isTupleType(type)) return false;
  return checker.getIndexInfosOfType(type).some((info) => (info.keyType.flags & 4) !== 0); // String
}

const NUMBER_LIKE = 296; // Number | NumberLiteral | Enum...
const STRING_LITERAL = 128;
function isChosenKey(type) {
  if (type.isUnion()) return type.types.every(isChosenKey);
  return (type.flags & (NUMBER_LIKE | STRING_LITERAL)) !== 0;
}

export default createRule({
  name: 'no-prototype-lookup',
  meta: {
    type: 'problem',
    docs: { description: 'No lookup by a computed string key on a plain record' },
    messages: {
      index:
        'Computed lookup on a plain record can reach Object.prototype: use a Map, or ownValue/setOwn from src/domain/own-properties.ts.',
      inOperator: '`in` with a computed key reaches Object.prototype: use Object.hasOwn or a Map.',
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    const services = ESLintUtils.getParserServices(context);
    const checker = services.program.getTypeChecker();
    const keyIsLiteral = (node) =>
      node.type === 'Literal' || (node.type === 'TemplateLiteral' && node.expressions.length === 0);
    return {
      MemberExpression(node) {
        if (!node.computed || keyIsLiteral(node.property)) return;
        const keyType = services.getTypeAtLocation(node.property);
        // Number-like keys, and keys the code names itself (a string literal type or a union of
        // them, e.g. a constant's property): only keys that come from data can be 'constructor'.
        if (isChosenKey(keyType)) return;
        if (hasStringIndex(checker, services.getTypeAtLocation(node.object))) {
          context.report({ node, messageId: 'index' });
        }
      },
      BinaryExpression(node) {
        if (node.operator === 'in' && !keyIsLiteral(node.left) && node.left.type !== 'PrivateIdentifier') {
          context.report({ node, messageId: 'inOperator' });
        }
      },
    };
  },
});
