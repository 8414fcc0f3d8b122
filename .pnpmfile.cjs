// Hortus serves /api/docs from Redoc's standalone bundle (redoc/bundles/redoc.standalone.js), which carries
// everything it runs on. The package's own dependencies and peers (React, mobx, styled-components, core-js,
// the OpenAPI tooling, ...) are for building Redoc into an app, so none of them enter the install.
function readPackage(pkg) {
  if (pkg.name === 'redoc') {
    pkg.dependencies = {};
    pkg.peerDependencies = {};
    pkg.peerDependenciesMeta = {};
    pkg.optionalDependencies = {};
  }
  return pkg;
}

module.exports = { hooks: { readPackage } };
