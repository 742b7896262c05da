'use strict'
// Docusaurus resolves plugins with require(), and loads them through jiti, whose ESM interop
// loses named imports (zod's `z`); Node's own require(esm) (Node ^20.19 || >=22.12) loads the
// ESM build as it is. The one CommonJS file of the package.
const { createRequire } = require('node:module')
module.exports = createRequire(__filename)('./docusaurus.mjs').default
