/** messaging's attachments HTTP port: files being sent are read from it, files received are stored in it. */
export { type FileReader, type FileToStore, FileTransferError, MessagingFiles, type StoredFile } from './messaging-files';
