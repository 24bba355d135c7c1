mod suites;
