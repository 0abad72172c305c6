import { loadConfig } from '../config';
import { isMediaHost, parseMediaHosts } from './media-hosts';

describe('media hosts', () => {
  const hosts = parseMediaHosts('zadn.vn, zdn.vn,DLFL.vn');

  it.each([
    'zadn.vn',
    's120-ava-talk.zadn.vn',
    'photo-stal-1.zadn.vn',
    'f21-zpc.zdn.vn',
    'file-stal-22.dlfl.vn',
    'S120-AVA-TALK.ZADN.VN',
    's1.zadn.vn.',
  ])('takes %s (the name itself or a subdomain, any case)', (host) => {
    expect(isMediaHost(host, hosts)).toBe(true);
  });

  it.each(['evilzadn.vn', 'zadn.vn.evil.example', 'zadn.vnx', 'vn', 'example.com', '127.0.0.1', '[::1]', '169.254.169.254', ''])(
    'refuses %s',
    (host) => {
      expect(isMediaHost(host, hosts)).toBe(false);
    },
  );

  it('an empty list takes nothing', () => {
    expect(parseMediaHosts(' , ')).toEqual([]);
    expect(isMediaHost('zadn.vn', [])).toBe(false);
  });

  it('reads a list in lower case, without repeats or the trailing dot of a full name', () => {
    expect(parseMediaHosts(' Zadn.vn., zadn.vn ,zdn.vn')).toEqual(['zadn.vn', 'zdn.vn']);
  });

  it.each(['https://zadn.vn', 'zadn.vn:443', '*.zadn.vn', '.zadn.vn', 'zadn.vn/x', 'za dn.vn', '-zadn.vn'])(
    'names an entry that is not a host name: %s',
    (entry) => {
      expect(() => parseMediaHosts(`zdn.vn,${entry}`)).toThrow('is not a host name');
    },
  );
});

describe('CHATNET_MEDIA_HOSTS', () => {
  const env = { ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') };

  it("defaults to the network's media hosts; empty downloads nothing", () => {
    expect(loadConfig(env).CHATNET_MEDIA_HOSTS).toEqual(['zdn.vn', 'zadn.vn', 'dlfl.vn', 'flchat.vn', 'dlmd.me']);
    expect(loadConfig({ ...env, CHATNET_MEDIA_HOSTS: 'Media.Example.com' }).CHATNET_MEDIA_HOSTS).toEqual(['media.example.com']);
    expect(loadConfig({ ...env, CHATNET_MEDIA_HOSTS: '' }).CHATNET_MEDIA_HOSTS).toEqual([]);
  });

  it('stops the service at start naming the variable and the bad entry', () => {
    expect(() => loadConfig({ ...env, CHATNET_MEDIA_HOSTS: 'zadn.vn,https://evil.example' })).toThrow(
      /CHATNET_MEDIA_HOSTS: "https:\/\/evil\.example" is not a host name/,
    );
  });
});
