"""Tests of the operation log (a package, so its module names cannot clash with tests/stores/)."""
