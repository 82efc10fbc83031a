/** What the body parser accepts: forms and JSON of 64 kB at most, flat query strings. */
export const bodyLimits = {
  multipart: false,
  urlencoded: true,
  json: true,
  text: false,
  formLimit: '64kb',
  jsonLimit: '64kb',
  jsonStrict: true,
  queryString: { depth: 1, parameterLimit: 50, arrayLimit: 20 },
};
