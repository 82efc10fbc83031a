/** A segment id: 1–64 lowercase letters, digits or dashes (the built-in ones are `enterprise`, `smb`...). */
export const segmentIdPattern = /^[a-z0-9-]{1,64}$/;
