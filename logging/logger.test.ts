import pino from 'pino';
import { cachedIsoTime } from './logger';

describe('cachedIsoTime', () => {
  afterEach(() => jest.restoreAllMocks());

  it("writes exactly pino's isoTime field, and a new one when the millisecond changes", () => {
    const now = jest.spyOn(Date, 'now');
    for (const ms of [Date.UTC(2026, 10, 25, 22, 0, 0, 1), Date.UTC(2026, 10, 25, 22, 0, 0, 2), 0]) {
      now.mockReturnValue(ms);
      expect(cachedIsoTime()).toBe(pino.stdTimeFunctions.isoTime());
      expect(cachedIsoTime()).toBe(`,"time":"${new Date(ms).toISOString()}"`);
    }
  });
});
