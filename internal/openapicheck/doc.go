// Package openapicheck checks recorded HTTP exchanges (requests and the
// responses to them) against an OpenAPI 3 description: the operation is
// known, the status is documented, and the bodies and parameters have the
// required fields, types and nullability the description gives. Tests use
// it to hold the sandbox's Hetzner fake, and the product's requests, to
// Hetzner's published API description; nothing in the product imports it.
//
// Schema validation is kin-openapi's (github.com/getkin/kin-openapi), which
// follows OpenAPI 3.0 (a null is valid only under `nullable: true`) and,
// for 3.1 documents, JSON Schema 2020-12 (a null needs the "null" type).
package openapicheck
