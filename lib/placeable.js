'use strict';
// The primitives that memory.place() (./shared_region.js) puts in a region, and how: each
// primitive's module registers itself, so that the region's module needs none of theirs.
const { invalidArgType } = require('./errors');

// Class → { place(memory, byteOffset, ...initialValues), values: how many initial values it takes }
const placeables = new Map();

function definePlaceable(Class, place, values = 0) {
  placeables.set(Class, { place, values });
}

// Places `Class` through its registered way; refuses anything else, and initial values that a
// primitive which needs none would silently ignore.
function placeWith(memory, byteOffset, Class, initialValues) {
  const placeable = placeables.get(Class);
  if (placeable === undefined) {
    const names = [...placeables.keys()].map((known) => known.name).join(', ');
    throw invalidArgType('Class', `one of ${names}`, Class);
  }
  if (initialValues.length > placeable.values) {
    throw invalidArgType(
      'initialValue',
      `undefined: a ${Class.name} takes ${placeable.values === 0 ? 'none' : 'one only'}`,
      initialValues[placeable.values],
    );
  }
  return placeable.place(memory, byteOffset, ...initialValues);
}

module.exports = { definePlaceable, placeWith };
