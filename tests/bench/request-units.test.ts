/** The RU model against the figures of the Microsoft Learn page it cites (bench/request-units.ts). */
import {
  DOCUMENT_SIZE_TABLE,
  createCharge,
  deleteCharge,
  queryCharge,
  readCharge,
  replaceCharge,
  writeSizeCharge,
} from '../../bench/request-units';

const KB = 1024;

describe('estimated request units', () => {
  it("gives the table's own figures at its rows", () => {
    expect(readCharge(1 * KB)).toBeCloseTo(1.0, 6);
    expect(writeSizeCharge(1 * KB)).toBeCloseTo(4.95, 6);
    expect(readCharge(128 * KB)).toBeCloseTo(9.95, 6);
    expect(writeSizeCharge(256 * KB)).toBeCloseTo(98.29, 6);
    expect(writeSizeCharge(2048 * KB)).toBeCloseTo(1250, 6);
    for (const [kb, read, write] of DOCUMENT_SIZE_TABLE) {
      expect(readCharge(kb * KB)).toBeCloseTo(read, 6);
      expect(writeSizeCharge(kb * KB)).toBeCloseTo(write, 6);
    }
  });

  it('interpolates between rows, charges an item under 1 KB as 1 KB, and grows with size', () => {
    expect(writeSizeCharge(1.5 * KB)).toBeCloseTo((4.95 + 6.29) / 2, 6);
    expect(writeSizeCharge(10)).toBeCloseTo(4.95, 6);
    expect(readCharge(0)).toBeCloseTo(1, 6);
    let previous = 0;
    for (let kb = 1; kb <= 4096; kb *= 1.5) {
      const charge = writeSizeCharge(kb * KB);
      expect(charge).toBeGreaterThan(previous);
      previous = charge;
    }
    expect(() => readCharge(-1)).toThrow(RangeError);
    expect(() => writeSizeCharge(Number.NaN)).toThrow(RangeError);
  });

  it("matches the issue's rule of thumb, about 5 RU plus 0.38 RU per KB, up to 256 KB", () => {
    for (const kb of [1, 16, 64, 128, 256]) {
      const thumb = 5 + 0.38 * (kb - 1);
      expect(Math.abs(writeSizeCharge(kb * KB) - thumb) / thumb).toBeLessThan(0.3);
    }
    // Above 256 KB the table rises faster than the rule.
    expect(writeSizeCharge(1024 * KB)).toBeGreaterThan(5 + 0.38 * 1023 * 1.5);
  });

  it("reproduces the page's worked examples", () => {
    // "5.0 (document size based) + 0.2 × 10 (indexing) = 7 RUs" (with the table's 4.95 for 1 KB)
    expect(createCharge(1 * KB, 10)).toBeCloseTo(4.95 + 2, 6);
    // "5.0 (deletion) + 5.0 (insertion) + 0.2 × 2 + 0.2 × 2 = 10.8 RUs"
    expect(replaceCharge(1 * KB, 1 * KB, 2, 2)).toBeCloseTo(4.95 * 2 + 0.8, 6);
    // "5.0 (document size) + 0.2 × 10 (index removal) = 7.0 RUs"
    expect(deleteCharge(1 * KB, 10)).toBeCloseTo(4.95 + 2, 6);
    // "Updates approximately consume twice as many RUs as creates when only a small number of index terms change."
    expect(replaceCharge(1 * KB, 1 * KB, 1, 1) / createCharge(1 * KB, 1)).toBeCloseTo(2, 1);
  });

  it('estimates a query as the point reads of what it returns', () => {
    expect(queryCharge([])).toBe(0);
    expect(queryCharge([KB, 128 * KB])).toBeCloseTo(1 + 9.95, 6);
  });
});
