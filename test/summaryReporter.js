/**
 * Prints the plain closing line CI reads: `N passed, N failed`. A suite that failed to run at all
 * (syntax error, failing beforeAll) counts as one failure so it can never pass silently.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const brokenSuites = results.testResults.filter(
      (suite) => suite.testExecError || (suite.failureMessage && suite.numFailingTests === 0),
    ).length;
    const failed = results.numFailedTests + brokenSuites;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = SummaryReporter;
