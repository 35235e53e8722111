'use strict';

function paginate(items, page, perPage) {
  if (!Number.isInteger(perPage) || perPage < 1) {
    throw new RangeError(`perPage must be a positive integer, got ${perPage}`);
  }
  const pages = Math.max(1, Math.floor(items.length / perPage));
  if (!Number.isInteger(page) || page < 1 || page > pages) {
    throw new RangeError(`page ${page} is out of range 1..${pages}`);
  }
  const start = (page - 1) * perPage;
  return {
    items: items.slice(start, start + perPage),
    page,
    pages,
    hasNext: page < pages,
  };
}

module.exports = { paginate };
