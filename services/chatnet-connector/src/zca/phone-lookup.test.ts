import { findUserByPhone, type ZcaPhoneApi } from './phone-lookup';

/** An api answering like zca-js 2.2's findUser: a UserBasic, or (error 216, nobody) a result without uid. */
function api(answer: Awaited<ReturnType<ZcaPhoneApi['findUser']>> | Error) {
  const asked: string[] = [];
  return {
    asked,
    api: {
      findUser: async (phone: string) => {
        asked.push(phone);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    } satisfies ZcaPhoneApi,
  };
}

describe('zca phone lookup', () => {
  it('asks the network with the digits of the E.164 number and names the user found', async () => {
    const a = api({ uid: '8812345', display_name: 'Mai', zalo_name: 'mai.tran', avatar: 'https://s120.example/mai.jpg' });
    expect(await findUserByPhone(a.api, '+84 901 234 567')).toEqual({
      uid: '8812345',
      displayName: 'Mai',
      avatarUrl: 'https://s120.example/mai.jpg',
    });
    expect(a.asked).toEqual(['84901234567']);
    // The national spelling is the same number: the network is asked with the country code.
    await findUserByPhone(a.api, '0901 234 567');
    expect(a.asked[1]).toBe('84901234567');
  });

  it('falls back to the network name when the user set no display name', async () => {
    expect(await findUserByPhone(api({ uid: '1', zalo_name: 'zed' }).api, '+8490')).toEqual({ uid: '1', displayName: 'zed', avatarUrl: '' });
  });

  it('is null when the network knows nobody by the number (a result without uid)', async () => {
    expect(await findUserByPhone(api({}).api, '+84901234567')).toBeNull();
    expect(await findUserByPhone(api(null).api, '+84901234567')).toBeNull();
  });

  it('rejects when the network could not be asked, so the caller retries rather than records "not found"', async () => {
    await expect(findUserByPhone(api(new Error('rate limited')).api, '+84901234567')).rejects.toThrow('rate limited');
  });
});
