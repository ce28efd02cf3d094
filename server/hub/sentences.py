"""The sentences the server writes in chat: a table's server lines and the lines for one player.

A table's server line is one line for everyone at the table, so it is written in English, as a plain
sentence; its nickType (the event's code, `W+R`, `u1undo`...) is what clients read, and the built-in
client says the line again in its reader's language from the code and the names and numbers of the
English sentence (server/static/server-words.js keeps the same sentences: keep the two in step).

A line for one player only (why their command was refused, a message not delivered) is written in
that player's language: the sentence for the refusal's code from the catalogue below, or the English
sentence the refusal came with when the catalogue has no entry or the player reads English (the English
one says more: it names the table, the nick, the limit). docs/protocol.md, "Server lines".

Over 500 lines because the catalogue is one table of every refusal in three or four languages, which
grows with every code the stream can tell; split, a code's sentences would be in two places.
"""

from __future__ import annotations

from fractions import Fraction

from server.engine.game import Result
from server.hub.clock import MAX_CLOCK, MAX_GIFT
from server.hub.spam import LINKS_FROM_NEW, LINKS_WINDOW
from server.protocol.codec import MAX_CHAT

PROPOSAL_WORDS = {  # what a proposition asks for, in a server line
    "score": "finish the game with the current result",
    "terr": "count the territory and finish",
    "drop": "cancel the game",
    "draw": "end the game in a draw",
    "new": "play a new game",
    "undo": "take back the last move",
}


def _points(score: Fraction) -> str:
    return str(score.numerator) if score.denominator == 1 else f"{float(score):g}"


Pair = tuple[str, str]


def result_sentence(result: Result, names: Pair, scores: tuple[Fraction, Fraction], how: str) -> str:
    """The English line that says how a game ended. `names` and `scores` are blue's and red's; `how` is
    `agreed` for a result both players agreed to, `no-show` for a tournament game nobody came to,
    `organiser` for one its organiser cancelled (cancelTable), `left` for a team game whose losing team
    has nobody left in it (docs/teams.md), `abandoned` for a game its player left and its opponent
    claimed or called off (server/hub/absences.py). A team's name is its nicks joined."""
    if result.reason == "Void":
        if how == "organiser":
            return "The organiser cancelled this game: it does not count."
        if how == "abandoned":
            return "The game was called off: a player left it."
        return "Nobody showed up; the game was cancelled." if how == "no-show" else "The game was cancelled."
    if result.winner == 0:
        if how == "agreed":
            return "Draw by agreement."
        return f"Draw, {_points(scores[0])}:{_points(scores[1])}."
    winner, loser = names[result.winner - 1], names[2 - result.winner]
    if result.reason == "R" and how == "abandoned":
        return f"{winner} won: {loser} left the game and did not come back."
    if result.reason == "R":
        return f"{winner} won: {loser} left the game." if how == "left" else f"{winner} won by resignation."
    if result.reason == "T":
        return f"{winner} won on time."
    if result.reason == "F":
        return f"{winner} won by forfeit: {loser} did not show up."
    won, lost = scores[result.winner - 1], scores[2 - result.winner]
    return f"{winner} won {_points(won)}:{_points(lost)}."


# --- lines for one player ----------------------------------------------------------------------

LANGUAGE_OF = {"uk": "ua"}  # zagram's code for Ukrainian is `ua`; a client may send the standard `uk`

# Beside the refusals' codes (docs/protocol.md, "Errors"): `notReached` (an action sent to another
# member that could not reach it), `notDelivered` (a private line to a player of another member),
# `internal` (a command of a poll that failed on a bug: server/hub/stream.py).
CATALOGUE: dict[str, dict[str, str]] = {
    "badTable": {
        "pl": "To nie jest numer stołu.",
        "ru": "Это не номер стола.",
        "ua": "Це не номер столу.",
    },
    "noSuchTable": {
        "pl": "Nie ma takiego stołu.",
        "ru": "Такого стола нет.",
        "ua": "Такого столу немає.",
    },
    "notAtTable": {
        "pl": "Nie jesteś przy tym stole.",
        "ru": "Вы не за этим столом.",
        "ua": "Ви не за цим столом.",
    },
    "emptyMessage": {
        "pl": "Pusta wiadomość nie została wysłana.",
        "ru": "Пустое сообщение не отправлено.",
        "ua": "Порожнє повідомлення не надіслано.",
    },
    "tooLong": {
        "pl": f"Wiadomość jest za długa (najwyżej {MAX_CHAT} znaków); nie została wysłana.",
        "ru": f"Сообщение слишком длинное (не больше {MAX_CHAT} символов); оно не отправлено.",
        "ua": f"Повідомлення задовге (не більше {MAX_CHAT} символів); його не надіслано.",
    },
    "repeatedLine": {
        "pl": "Ta sama wiadomość po raz kolejny: nie została wysłana.",
        "ru": "То же сообщение ещё раз: оно не отправлено.",
        "ua": "Те саме повідомлення ще раз: його не надіслано.",
    },
    "bannedWord": {
        "pl": "W tej wiadomości jest słowo, którego tu nie wolno używać; nie została wysłana.",
        "ru": "В этом сообщении есть слово, которое здесь запрещено; оно не отправлено.",
        "ua": "У цьому повідомленні є слово, яке тут заборонене; його не надіслано.",
    },
    "tooManyLinks": {
        "pl": f"Goście i konta młodsze niż dzień mogą wysłać najwyżej {LINKS_FROM_NEW} wiadomości z "
        f"linkiem w ciągu {LINKS_WINDOW / 60:.0f} minut; ta nie została wysłana. Poczekaj albo zaloguj "
        "się starszym kontem.",
        "ru": f"Гости и учётные записи моложе суток могут отправить не больше {LINKS_FROM_NEW} сообщений "
        f"со ссылкой за {LINKS_WINDOW / 60:.0f} минут; это не отправлено. Подождите или войдите с более "
        "старой учётной записью.",
        "ua": f"Гості й облікові записи, молодші за добу, можуть надіслати не більше {LINKS_FROM_NEW} "
        f"повідомлень із посиланням за {LINKS_WINDOW / 60:.0f} хвилин; це не надіслано. Зачекайте або "
        "увійдіть зі старішим обліковим записом.",
    },
    "notOnline": {
        "pl": "Tego gracza nie ma teraz na serwerze.",
        "ru": "Этого игрока сейчас нет на сервере.",
        "ua": "Цього гравця зараз немає на сервері.",
    },
    "noSuchLine": {
        "pl": "Nie ma takiej wiadomości ani rozmowy.",
        "ru": "Нет такого сообщения или разговора.",
        "ua": "Немає такого повідомлення чи розмови.",
    },
    "notModerator": {
        "pl": "Tylko moderatorzy mogą to zrobić.",
        "ru": "Это могут делать только модераторы.",
        "ua": "Це можуть робити лише модератори.",
    },
    "badCommand": {
        "pl": "Serwer nie zrozumiał tego polecenia.",
        "ru": "Сервер не понял эту команду.",
        "ua": "Сервер не зрозумів цю команду.",
    },
    "unsupported": {
        "pl": "To polecenie nie działa na tym serwerze.",
        "ru": "Эта команда не работает на этом сервере.",
        "ua": "Ця команда не працює на цьому сервері.",
    },
    "noInvitation": {
        "pl": "Tego zaproszenia już nie ma.",
        "ru": "Этого приглашения уже нет.",
        "ua": "Цього запрошення вже немає.",
    },
    "busy": {
        "pl": "Teraz się nie da: trwa inna gra albo zaproszenie.",
        "ru": "Сейчас нельзя: идёт другая игра или приглашение.",
        "ua": "Зараз не можна: триває інша гра або запрошення.",
    },
    "blocked": {
        "pl": "Ten gracz nie przyjmuje twoich zaproszeń.",
        "ru": "Этот игрок не принимает ваши приглашения.",
        "ua": "Цей гравець не приймає ваших запрошень.",
    },
    "privateBlocked": {
        "pl": "Ten gracz nie przyjmuje twoich prywatnych wiadomości.",
        "ru": "Этот игрок не принимает ваши личные сообщения.",
        "ua": "Цей гравець не приймає ваших особистих повідомлень.",
    },
    "privateFlood": {
        "pl": "Za dużo prywatnych wiadomości do gracza, który nie odpisał; nie wysłano. Poczekaj chwilę.",
        "ru": "Слишком много личных сообщений игроку, который не ответил; не отправлено. Подождите.",
        "ua": "Забагато особистих повідомлень гравцеві, який не відповів; не надіслано. Зачекайте.",
    },
    "privateFull": {
        "pl": "Ten gracz dostaje teraz za dużo wiadomości; nie wysłano. Spróbuj za minutę.",
        "ru": "Этот игрок сейчас получает слишком много сообщений; не отправлено. Попробуйте позже.",
        "ua": "Цей гравець зараз отримує забагато повідомлень; не надіслано. Спробуйте пізніше.",
    },
    "tooManyIgnored": {
        "pl": "Ignorujesz już zbyt wielu graczy: najpierw przestań ignorować któregoś.",
        "ru": "Вы уже игнорируете слишком много игроков: сначала перестаньте игнорировать кого-нибудь.",
        "ua": "Ви вже ігноруєте забагато гравців: спершу перестаньте ігнорувати когось.",
    },
    "accountsOnly": {
        "pl": "Tylko zarejestrowani gracze mogą odrzucać prywatne wiadomości od gości.",
        "ru": "Только зарегистрированные игроки могут отклонять личные сообщения от гостей.",
        "ua": "Лише зареєстровані гравці можуть відхиляти особисті повідомлення від гостей.",
    },
    "badGameType": {
        "pl": "Takiej gry nie można tu rozpocząć.",
        "ru": "Такую игру здесь начать нельзя.",
        "ua": "Таку гру тут почати не можна.",
    },
    "noSuchGame": {
        "pl": "Nie ma takiej gry w archiwum.",
        "ru": "Такой партии нет в архиве.",
        "ua": "Такої партії немає в архіві.",
    },
    "badNick": {
        "pl": "Z tym graczem nie można tego zrobić.",
        "ru": "С этим игроком так нельзя.",
        "ua": "З цим гравцем так не можна.",
    },
    "badLang": {
        "pl": "Nieznany język.",
        "ru": "Неизвестный язык.",
        "ua": "Невідома мова.",
    },
    "notPlayer": {
        "pl": "Mogą to zrobić tylko gracze przy tym stole.",
        "ru": "Это могут делать только игроки за этим столом.",
        "ua": "Це можуть робити лише гравці за цим столом.",
    },
    "gameOver": {
        "pl": "Gra jest już skończona.",
        "ru": "Игра уже окончена.",
        "ua": "Гру вже закінчено.",
    },
    "illegalMove": {
        "pl": "Ten ruch jest niedozwolony.",
        "ru": "Такой ход не разрешён.",
        "ua": "Такий хід не дозволено.",
    },
    "notYourTurn": {
        "pl": "To nie twoja kolej: teraz ruch innego gracza.",
        "ru": "Сейчас не ваша очередь: ходит другой игрок.",
        "ua": "Зараз не ваша черга: ходить інший гравець.",
    },
    "badMove": {
        "pl": "Nieprawidłowy ruch albo otoczenie.",
        "ru": "Неверный ход или окружение.",
        "ua": "Неправильний хід або оточення.",
    },
    "badColour": {
        "pl": "Nie możesz wybrać tego koloru.",
        "ru": "Этот цвет выбрать нельзя.",
        "ua": "Цей колір вибрати не можна.",
    },
    "badProposal": {
        "pl": "Taka propozycja lub odpowiedź jest teraz niemożliwa.",
        "ru": "Такое предложение или ответ сейчас невозможны.",
        "ua": "Така пропозиція чи відповідь зараз неможлива.",
    },
    "noProposal": {
        "pl": "Na tę propozycję nie możesz odpowiedzieć.",
        "ru": "На это предложение вы ответить не можете.",
        "ua": "На цю пропозицію ви відповісти не можете.",
    },
    "notAway": {
        "pl": "Przeciwnik jest przy stole: nie ma czego żądać.",
        "ru": "Соперник здесь: требовать нечего.",
        "ua": "Суперник тут: вимагати нічого.",
    },
    "claimTooSoon": {
        "pl": "Przeciwnik może jeszcze wrócić: poczekaj, aż minie czas na powrót.",
        "ru": "Соперник ещё может вернуться: подождите, пока выйдет время на возвращение.",
        "ua": "Суперник ще може повернутися: зачекайте, доки мине час на повернення.",
    },
    "claimTooShort": {
        "pl": "Mniej niż dwa ruchy każdego gracza: grę można odwołać, ale nie wygrać.",
        "ru": "Меньше двух ходов у каждого: игру можно отменить, но не выиграть.",
        "ua": "Менше ніж два ходи в кожного: гру можна скасувати, але не виграти.",
    },
    "claimInTournament": {
        "pl": "W grze turniejowej decyduje zegar i organizator: tu niczego nie można żądać.",
        "ru": "В турнирной игре решают часы и организатор: здесь ничего нельзя потребовать.",
        "ua": "У турнірній грі вирішують годинник і організатор: тут нічого не можна вимагати.",
    },
    "noRight": {
        "pl": "Przy tym stole to niedozwolone.",
        "ru": "За этим столом это не разрешено.",
        "ua": "За цим столом це не дозволено.",
    },
    "noClock": {
        "pl": "Ta gra nie ma zegara.",
        "ru": "В этой игре нет часов.",
        "ua": "У цій грі немає годинника.",
    },
    "alreadyPaused": {
        "pl": "Zegar przeciwnika jest już zatrzymany.",
        "ru": "Часы соперника уже остановлены.",
        "ua": "Годинник суперника вже зупинено.",
    },
    "notPaused": {
        "pl": "Zegar przeciwnika nie jest zatrzymany.",
        "ru": "Часы соперника не остановлены.",
        "ua": "Годинник суперника не зупинено.",
    },
    "badTime": {
        "pl": f"Można dodać od 1 do {MAX_GIFT} sekund.",
        "ru": f"Добавить можно от 1 до {MAX_GIFT} секунд.",
        "ua": f"Додати можна від 1 до {MAX_GIFT} секунд.",
    },
    "clockFull": {
        "pl": f"Zegar przeciwnika może wskazywać najwyżej {MAX_CLOCK} sekund ({MAX_CLOCK // 3600} godzin).",
        "ru": f"На часах соперника может быть не больше {MAX_CLOCK} секунд ({MAX_CLOCK // 3600} часов).",
        "ua": f"На годиннику суперника може бути не більше {MAX_CLOCK} секунд ({MAX_CLOCK // 3600} годин).",
    },
    "notYourSeat": {
        "pl": "Twoje miejsce przy tym stole zajmuje inna twoja sesja.",
        "ru": "Ваше место за этим столом занято другим вашим сеансом.",
        "ua": "Ваше місце за цим столом зайняте іншим вашим сеансом.",
    },
    "tooFast": {
        "pl": "Za szybko; poczekaj chwilę.",
        "ru": "Слишком быстро; подождите немного.",
        "ua": "Занадто швидко; зачекайте трохи.",
    },
    "tooManyTables": {
        "pl": "Nie można teraz otworzyć więcej stołów; spróbuj później.",
        "ru": "Сейчас нельзя открыть больше столов; попробуйте позже.",
        "ua": "Зараз не можна відкрити більше столів; спробуйте пізніше.",
    },
    "tooManyGames": {
        "pl": "Jeden z graczy ma już za dużo niedokończonych gier.",
        "ru": "У одного из игроков уже слишком много незаконченных игр.",
        "ua": "В одного з гравців уже забагато незакінчених ігор.",
    },
    "badRange": {
        "pl": "Zakres rankingu to dwie liczby od 0 do 9999 (najmniejsza najpierw) albo nic.",
        "ru": "Диапазон рейтинга — два числа от 0 до 9999 (меньшее первым) или ничего.",
        "ua": "Діапазон рейтингу — два числа від 0 до 9999 (менше першим) або нічого.",
    },
    "noSuchSeek": {
        "pl": "Tego wyzwania już nie ma: ktoś je przyjął albo zostało wycofane.",
        "ru": "Этого вызова уже нет: его приняли или отозвали.",
        "ua": "Цього виклику вже немає: його прийняли або відкликали.",
    },
    "tooManySeeks": {
        "pl": "Masz już za dużo otwartych wyzwań: najpierw wycofaj któreś.",
        "ru": "У вас уже слишком много открытых вызовов: сначала отзовите какой-нибудь.",
        "ua": "У вас уже забагато відкритих викликів: спершу відкличте якийсь.",
    },
    "seeksFull": {
        "pl": "Lobby nie przyjmie teraz więcej twoich wyzwań: przyjmij któreś albo spróbuj później.",
        "ru": "Сейчас лобби не примет больше ваших вызовов: примите какой-нибудь или попробуйте позже.",
        "ua": "Зараз лобі не прийме більше ваших викликів: прийміть якийсь або спробуйте пізніше.",
    },
    "gameFlood": {
        "pl": "Za dużo gier rozpoczęto w ostatniej godzinie; poczekaj chwilę.",
        "ru": "За последний час начато слишком много партий; подождите немного.",
        "ua": "За останню годину розпочато забагато партій; зачекайте трохи.",
    },
    "arenaFlood": {
        "pl": (
            "Przez jakiś czas nie dostaniesz pary: "
            "Ty lub goście z Twojego adresu rozpoczęliście w ostatniej godzinie zbyt wiele partii areny. "
            "Zaloguj się na konto albo poczekaj."
        ),
        "ru": (
            "Какое-то время вам не подберут пару: "
            "вы или гости с вашего адреса начали за последний час слишком много партий арены. "
            "Войдите в учётную запись или подождите."
        ),
        "ua": (
            "Деякий час вам не доберуть пару: "
            "ви або гості з вашої адреси розпочали за останню годину забагато партій арени. "
            "Увійдіть в обліковий запис або зачекайте."
        ),
    },
    "analysisFlood": {
        "pl": "Za dużo stołów analizy otwarto w ostatniej godzinie; poczekaj chwilę.",
        "ru": "За последний час открыто слишком много столов анализа; подождите немного.",
        "ua": "За останню годину відкрито забагато столів аналізу; зачекайте трохи.",
    },
    "entryFlood": {
        "pl": (
            "Z Twojego adresu zapisano się w ostatniej godzinie do turniejów zbyt wiele razy; "
            "zaloguj się na konto albo poczekaj."
        ),
        "ru": (
            "С вашего адреса за последний час слишком много раз записывались в турниры; "
            "войдите в учётную запись или подождите."
        ),
        "ua": (
            "З вашої адреси за останню годину забагато разів записувалися до турнірів; "
            "увійдіть в обліковий запис або зачекайте."
        ),
    },
    "seekFlood": {
        "pl": "Za dużo wyzwań w ciągu minuty; poczekaj chwilę.",
        "ru": "Слишком много вызовов за минуту; подождите немного.",
        "ua": "Забагато викликів за хвилину; зачекайте трохи.",
    },
    "notEligible": {
        "pl": "Nie możesz przyjąć tego wyzwania: jest twoje albo dla innego rankingu.",
        "ru": "Вы не можете принять этот вызов: он ваш или для другого рейтинга.",
        "ua": "Ви не можете прийняти цей виклик: він ваш або для іншого рейтингу.",
    },
    "noSuchPool": {
        "pl": "Nie ma takiej puli szybkiej gry.",
        "ru": "Такого пула быстрой игры нет.",
        "ua": "Такого пулу швидкої гри немає.",
    },
    "storage": {
        "pl": "Serwer nie może teraz niczego zapisać, więc tego nie zrobiono; zegary na razie stoją.",
        "ru": "Сервер сейчас не может ничего сохранить, поэтому это не сделано; часы пока стоят.",
        "ua": "Сервер зараз не може нічого зберегти, тому це не зроблено; годинники поки стоять.",
    },
    "unconfirmed": {
        "pl": "Serwer tego stołu zatrzymał się, zanim potwierdził, czy to zrobiono: stół pokaże to, gdy "
        "przejmie go inny serwer.",
        "ru": "Сервер этого стола остановился, не сообщив, сделано ли это: стол покажет это, когда его "
        "примет другой сервер.",
        "ua": "Сервер цього столу зупинився, не повідомивши, чи це зроблено: стіл покаже це, коли його "
        "прийме інший сервер.",
    },
    "chatFlood": {
        "pl": "Za dużo wiadomości w ciągu minuty; poczekaj chwilę.",
        "ru": "Слишком много сообщений за минуту; подождите немного.",
        "ua": "Забагато повідомлень за хвилину; зачекайте трохи.",
    },
    "tooManyInvitations": {
        "pl": "Za dużo zaproszeń w ciągu minuty; poczekaj chwilę.",
        "ru": "Слишком много приглашений за минуту; подождите немного.",
        "ua": "Забагато запрошень за хвилину; зачекайте трохи.",
    },
    "serverFull": {
        "pl": "Serwer jest pełny; wróć później.",
        "ru": "Сервер переполнен; зайдите позже.",
        "ua": "Сервер переповнений; зайдіть пізніше.",
    },
    "tooManyPlayers": {
        "pl": "Z twojego adresu lub sieci zalogowało się już za dużo graczy.",
        "ru": "С вашего адреса или из вашей сети уже вошло слишком много игроков.",
        "ua": "З вашої адреси або мережі вже ввійшло забагато гравців.",
    },
    "idInUse": {
        "pl": "Ten identyfikator jest zalogowany z innym nickiem.",
        "ru": "С этим идентификатором уже вошли под другим ником.",
        "ua": "З цим ідентифікатором уже ввійшли під іншим ніком.",
    },
    "nickInUse": {
        "pl": "Ten nick jest zajęty.",
        "ru": "Этот ник занят.",
        "ua": "Цей нік зайнятий.",
    },
    "notLoggedIn": {
        "pl": "Sesja wygasła: zaloguj się ponownie.",
        "ru": "Сеанс закончился: войдите снова.",
        "ua": "Сеанс завершився: увійдіть знову.",
    },
    "badId": {
        "pl": "Nieprawidłowy identyfikator gracza.",
        "ru": "Неверный идентификатор игрока.",
        "ua": "Неправильний ідентифікатор гравця.",
    },
    "badMsgNo": {
        "pl": "Klient wysłał błędne żądanie; odśwież stronę.",
        "ru": "Клиент отправил неверный запрос; обновите страницу.",
        "ua": "Клієнт надіслав неправильний запит; оновіть сторінку.",
    },
    "botUnrated": {
        "pl": "Bot i człowiek grają tu tylko gry nierankingowe.",
        "ru": "Бот и человек играют здесь только нерейтинговые игры.",
        "ua": "Бот і людина грають тут лише нерейтингові ігри.",
    },
    "badTeams": {
        "pl": "Gra drużynowa wymaga dwóch równych drużyn po 2 do 4 graczy, bez komputera.",
        "ru": "Для командной игры нужны две равные команды по 2–4 игрока, без компьютера.",
        "ua": "Для командної гри потрібні дві рівні команди по 2–4 гравці, без комп’ютера.",
    },
    "otherMember": {
        "pl": "Ten gracz jest na innym serwerze klastra: gry drużynowe toczą się na jednym.",
        "ru": "Этот игрок на другом сервере кластера: командные игры идут на одном.",
        "ua": "Цей гравець на іншому сервері кластера: командні ігри йдуть на одному.",
    },
    "samePlayer": {
        "pl": "Ten sam gracz jest podany dwa razy.",
        "ru": "Один и тот же игрок указан дважды.",
        "ua": "Того самого гравця вказано двічі.",
    },
    "badSayHiTimes": {
        "pl": "Nieprawidłowe czasy na przyjście do stołu.",
        "ru": "Неверное время на приход к столу.",
        "ua": "Неправильний час на прихід до столу.",
    },
    "keyNotForTournament": {
        "pl": "Ten klucz nie jest kluczem tego turnieju.",
        "ru": "Этот ключ не от этого турнира.",
        "ua": "Цей ключ не від цього турніру.",
    },
    "notSetUp": {
        "pl": "Tego stołu nie założył organizator.",
        "ru": "Этот стол открыл не организатор.",
        "ua": "Цей стіл відкрив не організатор.",
    },
    "alreadyCancelled": {
        "pl": "Ta partia jest już anulowana.",
        "ru": "Эта партия уже отменена.",
        "ua": "Цю партію вже скасовано.",
    },
    "banned": {
        "pl": "Masz zakaz wstępu na ten serwer.",
        "ru": "Вам закрыт доступ на этот сервер.",
        "ua": "Вам закрито доступ на цей сервер.",
    },
    "muted": {
        "en": "You are muted until {until} ({reason}): your lines are not sent.",
        "pl": "Masz zakaz pisania do {until} ({reason}): twoje wiadomości nie są wysyłane.",
        "ru": "Вам запрещено писать до {until} ({reason}): ваши сообщения не отправляются.",
        "ua": "Вам заборонено писати до {until} ({reason}): ваші повідомлення не надсилаються.",
    },
    "mutedForGood": {
        "en": "You are muted for good ({reason}): your lines are not sent.",
        "pl": "Masz stały zakaz pisania ({reason}): twoje wiadomości nie są wysyłane.",
        "ru": "Вам навсегда запрещено писать ({reason}): ваши сообщения не отправляются.",
        "ua": "Вам назавжди заборонено писати ({reason}): ваші повідомлення не надсилаються.",
    },
    "kicked": {
        "en": "A moderator ended your session ({reason}).",
        "pl": "Moderator zakończył twoją sesję ({reason}).",
        "ru": "Модератор завершил ваш сеанс ({reason}).",
        "ua": "Модератор завершив ваш сеанс ({reason}).",
    },
    "bannedNow": {
        "en": "You are banned from this server until {until} ({reason}).",
        "pl": "Masz zakaz wstępu na ten serwer do {until} ({reason}).",
        "ru": "Вам закрыт доступ на этот сервер до {until} ({reason}).",
        "ua": "Вам закрито доступ на цей сервер до {until} ({reason}).",
    },
    "bannedNowForGood": {
        "en": "You are banned from this server for good ({reason}).",
        "pl": "Masz stały zakaz wstępu na ten serwer ({reason}).",
        "ru": "Вам навсегда закрыт доступ на этот сервер ({reason}).",
        "ua": "Вам назавжди закрито доступ на цей сервер ({reason}).",
    },
    "lobbyRegistered": {
        "en": "Until {until} only registered players write in the lobby.",
        "pl": "Do {until} w lobby piszą tylko zarejestrowani gracze.",
        "ru": "До {until} в лобби пишут только зарегистрированные игроки.",
        "ua": "До {until} у лобі пишуть лише зареєстровані гравці.",
    },
    "lobbySlow": {
        "en": "The lobby is in slow mode: one line every {seconds} seconds.",
        "pl": "Lobby jest w trybie powolnym: jedna wiadomość co {seconds} s.",
        "ru": "Лобби в медленном режиме: одно сообщение раз в {seconds} с.",
        "ua": "Лобі в повільному режимі: одне повідомлення раз на {seconds} с.",
    },
    "notReached": {
        "en": "Not done: the table's server cannot be reached now.",
        "pl": "Nie zrobiono: serwer tego stołu jest teraz nieosiągalny.",
        "ru": "Не сделано: сервер этого стола сейчас недоступен.",
        "ua": "Не зроблено: сервер цього столу зараз недоступний.",
    },
    "internal": {
        "en": "The server failed on this command; it may not have been done.",
        "pl": "Serwer zawiódł przy tym poleceniu; mogło ono nie zostać wykonane.",
        "ru": "Сервер не справился с этой командой; возможно, она не выполнена.",
        "ua": "Сервер не впорався з цією командою; можливо, її не виконано.",
    },
    "setUpNotStored": {
        "en": "The table set up for you could not be saved, so it was closed: the organiser may set it up "
        "again.",
        "pl": "Nie udało się zapisać stołu przygotowanego dla Ciebie, więc go zamknięto: organizator może "
        "przygotować go ponownie.",
        "ru": "Стол, созданный для вас, не удалось сохранить, поэтому он закрыт: организатор может создать "
        "его снова.",
        "ua": "Стіл, створений для вас, не вдалося зберегти, тому його закрито: організатор може створити "
        "його знову.",
    },
    "notDelivered": {
        "en": "Your message to {nick} was not delivered: they are not reachable now.",
        "pl": "Twoja wiadomość do {nick} nie dotarła: ten gracz jest teraz nieosiągalny.",
        "ru": "Ваше сообщение для {nick} не доставлено: игрок сейчас недоступен.",
        "ua": "Ваше повідомлення для {nick} не доставлено: гравець зараз недоступний.",
    },
}


def for_player(lang: str, code: str, english: str = "", **values: str) -> str:
    """The sentence for one player reading `lang`: the catalogue's for `code` in that language, else
    `english` (or the catalogue's English), with `values` filled in."""
    sentences = CATALOGUE.get(code, {})
    text = sentences.get(LANGUAGE_OF.get(lang, lang)) or english or sentences.get("en", code)
    if not values:  # a sentence that needs values which did not come with the code: the English one
        return english if english and "{" in text else text  # (it says it all) instead
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        return english or text
