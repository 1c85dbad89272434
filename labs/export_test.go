package labs

// LoadAll exposes the embedded labs' loader to the tests, with fixture
// folders and a made-up list of implemented labs.
var LoadAll = loadAll
