/** Header vocabulary shared by validation, options and stores. */

/** Header names never written to a record, whatever the options say. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
];

/** Request headers stored without being named by `storeHeaders`: they describe the body, never who sends it. */
export const STORED_HEADERS: readonly string[] = ['content-type', 'accept', 'content-language'];

/** An HTTP field name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
