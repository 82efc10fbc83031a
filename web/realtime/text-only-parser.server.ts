import * as parser from 'socket.io-parser';

/**
 * Socket.IO's packet parser, refusing binary packets. Our client sends no events, let alone binary ones,
 * but the default parser keeps a binary packet's attachments (up to 10 frames of up to 1 MB each) until
 * the last one arrives: a connection could hold ~10 MB nobody would ever read (20 of one signed-in user's
 * held 180 MB, for as long as they stayed open). With no attachment allowed, such a packet is a parse
 * error, and Socket.IO closes its connection.
 */
class TextOnlyDecoder extends parser.Decoder {
  constructor() {
    super({ maxAttachments: 0 });
  }
}

export const textOnlyParser = { ...parser, Decoder: TextOnlyDecoder };
