/**
 * Strings a hash, an encoding or a plain-object lookup could take for one another: the same text
 * precomposed and decomposed, one and two and three bytes a unit, a surrogate pair and a lone
 * surrogate, and names of Object.prototype. The embedded store's ids and partition keys and the
 * broker's duplicate-detection history must keep each apart, as data like any other.
 */
export const LOOK_ALIKE_KEYS: readonly string[] = [
  'é',
  'e\u0301',
  '日本',
  '日本語',
  '😀',
  '\ud83d',
  '__proto__',
  'constructor',
];
