import { asksForPerson } from './person-request';

// The customer asking for a person hands the conversation over whatever the engine's confidence (issue #32 item 5),
// typed with or without diacritics; a message that merely mentions staff does not.
describe('asking for a person', () => {
  it.each([
    'Cho tôi gặp nhân viên',
    'cho toi gap nhan vien',
    'Em muốn gặp nhân viên tư vấn ạ',
    'em muon gap nhan vien tu van a',
    'cho mình nói chuyện với người thật được không?',
    'cho minh noi chuyen voi nguoi that duoc khong',
    'gặp người tư vấn đi',
    'Nhân viên ơi, trả lời em với',
    'nhan vien oi',
    'tôi không muốn chat với bot',
    'Can I talk to a human?',
    'talk to a human please',
    'I want to speak with a real person',
    'Please connect me to an agent',
    'I need a human agent',
    'are you a bot? I want a person',
  ])('%j asks for a person', (text) => {
    expect(asksForPerson(text)).toBe(true);
  });

  it.each([
    'Nhân viên giao hàng đến chưa vậy shop?',
    'nhan vien giao hang den chua',
    'Giá áo khoác bao nhiêu?',
    'How much is the blue shirt?',
    'The delivery person was very kind, thanks',
    'Is this item available in size M?',
  ])('%j does not', (text) => {
    expect(asksForPerson(text)).toBe(false);
  });
});
