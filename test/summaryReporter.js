const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Prints the plain closing line CI reads: `N passed, N failed`, and keeps it in
 * test-output/summary.txt so .ci/run can repeat it as the very last line. A suite that failed to
 * run at all (syntax error, failing beforeAll) counts as one failure so it can never pass silently.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const brokenSuites = results.testResults.filter(
      (suite) => suite.testExecError || (suite.failureMessage && suite.numFailingTests === 0),
    ).length;
    const failed = results.numFailedTests + brokenSuites;
    const line = `${results.numPassedTests} passed, ${failed} failed`;
    const dir = join(__dirname, '..', 'test-output');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'summary.txt'), `${line}\n`);
    process.stderr.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
