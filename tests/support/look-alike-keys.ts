/**
 * Strings a hash, an encoding or a plain-object lookup could take for one another: the same text
 * precomposed and decomposed, one and two and three bytes a unit, a surrogate pair and a lone
 * surrogate, and names of Object.prototype. The off-heap key tables and what stands on them (the
 * file-mode store's ids, the broker's duplicate-detection history) must keep each apart.
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
