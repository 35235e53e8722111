'use strict';

// One line of CSV into its fields.
function splitCsvLine(line) {
  return line.split(',');
}

module.exports = { splitCsvLine };
